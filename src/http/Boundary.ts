/**
 * The boundary of an HttpApi as one layer: the edge (request id, CORS, odd paths, error mapping), both request-shape
 * middlewares, and a router that neither forgives a trailing slash nor folds case. The service's API uses it, and so
 * does the small API the boundary tests define.
 */
import { HttpApiBuilder, HttpRouter } from "@effect/platform"
import type { HttpApi, HttpApiGroup } from "@effect/platform"
import { Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.js"
import { makeCors } from "./Cors.js"
import { errorBoundary } from "./ErrorBoundary.js"
import { RequestShapeLive } from "./RequestShape.js"
import { makeRouteTable } from "./RouteTable.js"

/** Paths served beside the API by the platform: the OpenAPI document and the docs page. */
export const DescriptionPaths = ["/openapi.json", "/docs"] as const

/** The boundary layer of an API; `otherPaths` are further routes served beside it (for 405 detection). */
export const boundaryLayer = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  otherPaths: ReadonlyArray<string> = []
) => {
  const table = makeRouteTable(api, [...DescriptionPaths, ...otherPaths])
  return Layer.mergeAll(
    RequestShapeLive(table),
    HttpApiBuilder.middleware(
      Effect.map(AppConfig, (config) => errorBoundary(table, makeCors(config.corsAllowedOrigins)) as any)
    ),
    // No cap on a path parameter's length: the router would answer a long one as a miss (405 on a known path),
    // where the route's handler is the one to answer (`404 run_not_found`). Node's header size limit bounds the URL.
    HttpRouter.setRouterConfig({ ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: Infinity })
  )
}
