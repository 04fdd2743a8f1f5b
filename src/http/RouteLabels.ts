/**
 * The route a request is counted under in metrics and the access log: the template it was served by
 * (`/v1/runs/:run_id`, never the raw path, so a metric has one series per route and not one per run id), and
 * `unmatched` for a path no route serves. A static path is one map lookup; only paths with a parameter are tested
 * against the templates, in the router's order. Methods outside the standard set are counted as `OTHER`, so a
 * caller cannot mint new series.
 */

/** The route label of a path no route serves. */
export const UnmatchedRoute = "unmatched"

const StandardMethods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

/** The method as a label value: itself when standard, `OTHER` otherwise. */
export const methodLabel = (method: string): string => StandardMethods.has(method) ? method : "OTHER"

/** A route as the router knows it. */
export interface RouteEntry {
  readonly method: string
  readonly path: string
}

/** Finds the route label of a method and path (the URL without its query). */
export type RouteLabeler = (method: string, path: string) => string

/** A route template (`:name` a segment, `*` anything) as a pattern of the whole path. */
export const templateRegExp = (template: string): RegExp =>
  new RegExp(
    "^" + template.split("/").map((segment) =>
      segment.startsWith(":") ? "[^/]+" : segment === "*" ? ".*" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    ).join("/") + "$"
  )

export const makeRouteLabeler = (routes: Iterable<RouteEntry>): RouteLabeler => {
  const exact = new Set<string>()
  const patterns: Array<{ readonly method: string; readonly pattern: RegExp; readonly template: string }> = []
  for (const { method, path } of routes) {
    if (path.includes(":") || path.includes("*")) {
      patterns.push({ method, pattern: templateRegExp(path), template: path })
      continue
    }
    exact.add(path)
  }
  return (method, path) => {
    if (exact.has(path)) return path
    let other: string | undefined
    for (const entry of patterns) {
      if (!entry.pattern.test(path)) continue
      if (entry.method === method || entry.method === "*") return entry.template
      other ??= entry.template
    }
    return other ?? UnmatchedRoute
  }
}

/** The path of a request URL (without its query string). */
export const pathOf = (url: string): string => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}
