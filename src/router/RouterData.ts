/**
 * The router's data, loaded and validated once when the service starts: the model catalog
 * (`ROUTER_CATALOG_PATH`) and the task taxonomy (`ROUTER_TASK_TYPES_PATH`, checked against the catalog). An invalid
 * file fails the layer, so the service refuses to start with a message naming the file, the model or task type and
 * the field. Operators refresh the snapshot by pointing the settings at new files and restarting.
 */
import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.js"
import { type Catalog, loadCatalog } from "./Catalog.js"
import { loadTaxonomy, type Taxonomy } from "./Taxonomy.js"

/** The loaded catalog and taxonomy. */
export interface RouterDataShape {
  readonly catalog: Catalog
  readonly taxonomy: Taxonomy
}

/** The router's catalog and taxonomy, as a service. */
export class RouterData extends Context.Service<RouterData, RouterDataShape>()("RouterData") {
  /** Loads both files named by the settings; fails with `CatalogInvalid` or `TaxonomyInvalid`. */
  static readonly layer = Layer.effect(
    RouterData,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const catalog = yield* loadCatalog(config.routerCatalogPath)
      const taxonomy = yield* loadTaxonomy(config.routerTaskTypesPath, catalog)
      return { catalog, taxonomy }
    })
  )
}
