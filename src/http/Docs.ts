/**
 * `GET /docs`: the interactive API reference (Scalar) over the OpenAPI document, the page effect's
 * `HttpApiScalar.layer` serves, except that Scalar's 3.3 MB script is read from the installed effect on the first
 * request instead of being compiled into the bundle, where every start would pay for reading it.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { type HttpApi, type HttpApiGroup, OpenApi } from "effect/http-api"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { escapeHtml } from "../billing/LocalPages.js"

/** Scalar's standalone script, from the module HttpApiScalar inlines it from (beside its CommonJS build). */
const loadScalarScript = Effect.tryPromise({
  try: async () => {
    const entry = createRequire(import.meta.url).resolve("effect/http-api/HttpApiScalar")
    const module = await import(pathToFileURL(join(dirname(entry), "internal", "httpApiScalar.js")).href)
    const script: unknown = module.javascript ?? module.default?.javascript
    if (typeof script !== "string") throw new Error("effect's httpApiScalar module has no `javascript` string")
    return script
  },
  catch: (cause) => new Error(`the API reference's script could not be loaded: ${String(cause)}`, { cause })
}).pipe(Effect.orDie)

// As in effect's http-api/internal/html.ts: JSON inside <script> must not close the tag or break a string literal.
const escapeJson = (value: unknown): string =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/[\u2028\u2029]/g, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"))

/** The page's HTML: HttpApiScalar's own template, with the script inline. */
const docsPage = (spec: OpenApi.OpenAPISpec, script: string): string => {
  const description = spec.info.description
  return `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(spec.info.title)}</title>
    ${!description ? "" : `<meta name="description" content="${escapeHtml(description)}"/>`}
    ${!description ? "" : `<meta name="og:description" content="${escapeHtml(description)}"/>`}
    <meta
      name="viewport"
      content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <script id="api-reference" type="application/json">
      ${escapeJson(spec)}
    </script>
    <script>
      document.getElementById('api-reference').dataset.configuration = JSON.stringify(${escapeJson({ _integration: "html" })})
    </script>
    <script>${script}</script>
  </body>
</html>`
}

/** Serves the page of `api` at `path`, built (the OpenAPI document and the script) on its first request and kept. */
export const docsLayer = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  path: `/${string}`
) =>
  HttpRouter.use((router) => {
    let page: string | undefined
    return router.add(
      "GET",
      path,
      Effect.suspend(() =>
        page !== undefined
          ? Effect.succeed(page)
          : Effect.map(loadScalarScript, (script) => (page = docsPage(OpenApi.fromApi(api), script)))
      ).pipe(Effect.map((html) => HttpServerResponse.html(html)))
    )
  })
