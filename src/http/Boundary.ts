/**
 * The boundary of an HttpApi as one layer: the route table its edge (ErrorBoundary.ts, applied around the router by
 * src/server/Listen.ts) and its request-shape middlewares work from, and both request-shape middlewares; beside it,
 * the settings of the router the routes are served by, which neither forgives a trailing slash nor folds case.
 */
import { Context, Layer } from "effect"
import type { HttpApi, HttpApiGroup } from "effect/http-api"
import { RequestShapeLive } from "./RequestShape.js"
import { makeRouteTable, type RouteTable } from "./RouteTable.js"

/** Paths served beside the API by the platform: the OpenAPI document and the docs page. */
export const DescriptionPaths = ["/openapi.json", "/docs"] as const

/** The boundary of the API being served: its route table (with the paths served beside it). */
export class Boundary extends Context.Service<Boundary, { readonly table: RouteTable }>()("Boundary") {}

/**
 * The router of a server: routes are exact (no trailing slash forgiven, case kept), and a path parameter's length is
 * not capped: the router would answer a long one as a miss (405 on a known path), where the route's handler is the one
 * to answer (`404 run_not_found`). Node's header size limit bounds the URL.
 */
export const RouterSettings = { ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: Infinity } as const

/** The boundary layer of an API; `otherPaths` are further routes served beside it (for 405 detection). */
export const boundaryLayer = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  otherPaths: ReadonlyArray<string> = []
) => {
  const table = makeRouteTable(api, [...DescriptionPaths, ...otherPaths])
  return Layer.merge(RequestShapeLive(table), Layer.succeed(Boundary, { table }))
}
