/**
 * The boundary of an HttpApi as one layer: the route table its edge (ErrorBoundary.ts, applied around the router by
 * Listen.ts: request id, CORS, odd paths, error mapping) and its request-shape middlewares work from, both request-shape
 * middlewares, and the router the API's routes are registered on, which neither forgives a trailing slash nor folds
 * case. The service's API uses it, and so does the small API the boundary tests define.
 */
import { Context, Layer } from "effect"
import { HttpRouter } from "effect/http"
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
export const RouterLive = HttpRouter.layer.pipe(
  Layer.provide(Layer.succeed(HttpRouter.RouterConfig, { ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: Infinity }))
)

/**
 * The boundary layer of an API; `otherPaths` are further routes served beside it (for 405 detection). It provides the
 * router too, so the API's routes and the server (Listen.ts) register on and serve the same one.
 */
export const boundaryLayer = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  otherPaths: ReadonlyArray<string> = []
) => {
  const table = makeRouteTable(api, [...DescriptionPaths, ...otherPaths])
  return Layer.mergeAll(RequestShapeLive(table), Layer.succeed(Boundary, { table }), RouterLive)
}
