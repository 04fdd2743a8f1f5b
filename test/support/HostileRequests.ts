/**
 * Generated hostile requests for the fuzz suite: for every route, a request the contract must refuse, built from a
 * valid one with at least one refusing change (credential, body, content type, query, path, method or idempotency
 * key) and maybe a harmless one (an odd `x-request-id`). Each generated request names its input classes, so the suite
 * can report how many of each it sent. Also generated: bodies that are hostile yet valid (prototype names and
 * `__proto__` as question ids, option names and state keys), which must run like any other.
 */
import fc from "fast-check"

/** One request to send, with the input classes it exercises. */
export interface HostileRequest {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
  readonly classes: ReadonlyArray<string>
}

/** What a generated request is sent with: the fuzz organization's credential and ids that exist in it. */
export interface FuzzContext {
  readonly secret: string
  readonly keyId: string
  readonly runId: string
}

type Route = {
  readonly method: string
  readonly path: (context: FuzzContext) => string
  /** The body of a valid request (JSON text), for routes that take one. */
  readonly body?: (context: FuzzContext) => unknown
  /** The route answers body problems as JSON `invalid_body` (runs and router) or plain text (keys, billing). */
  readonly style: "json" | "plain"
  readonly idempotency?: "required" | "optional"
}

const oneQuestion = {
  kind: "decision",
  state: { ticket: "charged twice, please refund" },
  questions: { refund: { type: "noul", instructions: "Does the customer ask for a refund?" } }
}

/** Every `/v1` route, with a valid request of each. */
export const Routes: ReadonlyArray<Route> = [
  { method: "POST", path: () => "/v1/runs", body: () => oneQuestion, style: "json", idempotency: "required" },
  { method: "GET", path: () => "/v1/runs", style: "json" },
  { method: "GET", path: (c) => `/v1/runs/${c.runId}`, style: "json" },
  { method: "GET", path: (c) => `/v1/runs/${c.runId}/stream`, style: "json" },
  { method: "POST", path: () => "/v1/router/select", body: () => ({ prompt: "Write a haiku about autumn" }), style: "json", idempotency: "optional" },
  { method: "GET", path: () => "/v1/router/task-types", style: "json" },
  { method: "GET", path: () => "/v1/router/models", style: "json" },
  { method: "GET", path: () => "/v1/keys", style: "plain" },
  { method: "GET", path: (c) => `/v1/keys/${c.keyId}`, style: "plain" },
  { method: "POST", path: () => "/v1/keys", body: () => ({ name: "fuzz", scopes: ["runs_read"] }), style: "plain" },
  { method: "DELETE", path: (c) => `/v1/keys/${c.keyId}`, style: "plain" },
  { method: "POST", path: (c) => `/v1/keys/${c.keyId}/rotate`, style: "plain" },
  { method: "PATCH", path: (c) => `/v1/keys/${c.keyId}`, body: () => ({ limits: { period: "day" } }), style: "plain" },
  { method: "GET", path: () => "/v1/usage", style: "plain" },
  { method: "GET", path: () => "/v1/usage/ledger", style: "plain" },
  { method: "GET", path: () => "/v1/usage/daily", style: "plain" },
  { method: "GET", path: () => "/v1/usage/export", style: "plain" },
  { method: "GET", path: (c) => `/v1/usage/runs/${c.runId}`, style: "plain" },
  { method: "GET", path: () => "/v1/quota", style: "plain" },
  { method: "GET", path: () => "/v1/billing", style: "plain" },
  { method: "POST", path: () => "/v1/billing/checkout", body: () => ({ amount_micros: 25_000_000 }), style: "plain" },
  { method: "POST", path: () => "/v1/billing/portal", style: "plain" },
  { method: "PUT", path: () => "/v1/billing/auto-recharge", body: () => ({ enabled: false, threshold_micros: 0, amount_micros: 5_000_000 }), style: "plain" }
]

/** Every field name a body of these routes defines (an added field must not be one, or it could make a valid body). */
const FieldNames = new Set([
  "kind", "model", "instructions", "state", "messages", "questions", "schema", "draws", "think_tokens", "max_output_tokens",
  "deadline_ms", "capability_hint", "prompt", "policy", "domain", "task_type", "latency", "max_latency_ms", "weights",
  "models", "name", "scopes", "principal", "limits", "amount_micros", "enabled", "threshold_micros"
])

const lone = fc.constantFrom("\ud800", "\udbff", "\udc00", "\udfff", "a\ud83d", "\ude00b")
const nul = fc.constantFrom("\u0000", "a\u0000b", "\u0000\u0000")
const prototypeName = fc.constantFrom("__proto__", "constructor", "toString", "valueOf", "hasOwnProperty", "__defineGetter__", "prototype")
const text = fc.string({ maxLength: 12 })

/** JSON text for a value with one string (a key or a value, somewhere) replaced by unstorable text. */
const poison = (value: unknown, bad: string, asKey: boolean, at: number): string => {
  const strings: Array<{ readonly holder: any; readonly key: string | number; readonly isKey: boolean }> = []
  const walk = (node: any) => {
    if (Array.isArray(node)) node.forEach((item, index) => typeof item === "string" ? strings.push({ holder: node, key: index, isKey: false }) : walk(item))
    else if (node !== null && typeof node === "object") {
      for (const key of Object.keys(node)) {
        strings.push({ holder: node, key, isKey: true })
        if (typeof node[key] === "string") strings.push({ holder: node, key, isKey: false })
        else walk(node[key])
      }
    }
  }
  const copy = structuredClone(value)
  walk(copy)
  const candidates = strings.filter((entry) => entry.isKey === asKey)
  const target = candidates[at % Math.max(1, candidates.length)]
  if (target === undefined) return JSON.stringify({ ...(copy as object), [`x${bad}`]: 1 })
  if (target.isKey) {
    const entries = Object.entries(target.holder)
    for (const key of Object.keys(target.holder)) delete target.holder[key]
    for (const [key, child] of entries) target.holder[key === target.key ? `${key}${bad}` : key] = child
  } else {
    target.holder[target.key] = `${target.holder[target.key]}${bad}`
  }
  return JSON.stringify(copy)
}

type Mutation = (request: HostileRequest, route: Route, context: FuzzContext) => HostileRequest

const withHeader = (request: HostileRequest, name: string, value: string | undefined): HostileRequest => {
  const headers = { ...request.headers }
  if (value === undefined) delete headers[name]
  else headers[name] = value
  return { ...request, headers }
}

const tag = (request: HostileRequest, name: string): HostileRequest => ({ ...request, classes: [...request.classes, name] })

/** Changes that make any request refused: the credential. */
const credential: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constant<Mutation>((r) => tag(withHeader(r, "authorization", undefined), "credential:missing")),
  fc.constantFrom("Basic", "Token", "Bearer", "bearer ", "BEARER").map<Mutation>((scheme) => (r) =>
    tag(withHeader(r, "authorization", `${scheme} `), "credential:empty-or-other-scheme")),
  fc.stringMatching(/^[0-9a-f]{64}$/).map<Mutation>((hex) => (r) =>
    tag(withHeader(r, "authorization", `Bearer otsk_${hex.toLowerCase()}`), "credential:unknown-key")),
  fc.constantFrom("otsk_", "otsk_XYZ", `otsk_${"A".repeat(64)}`, `otsk_${"0".repeat(65)}`).map<Mutation>((key) => (r) =>
    tag(withHeader(r, "authorization", `Bearer ${key}`), "credential:malformed-key")),
  fc.string({ minLength: 1, maxLength: 40 }).filter((s) => /^[\x21-\x7e]+$/.test(s) && !s.startsWith("otsk_")).map<Mutation>(
    (token) => (r) => tag(withHeader(r, "authorization", `Bearer ${token}`), "credential:forged-session")
  ),
  fc.constant<Mutation>((r) => tag(withHeader(r, "authorization", "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."), "credential:unsigned-jwt"))
)

/** Changes that make a request with a body refused: its body or content type. */
const body: fc.Arbitrary<Mutation> = fc.oneof(
  fc.nat().map<Mutation>((cut) => (r) =>
    tag({ ...r, body: r.body!.slice(0, Math.max(1, cut % r.body!.length)) }, "body:truncated-json")),
  fc.constantFrom("", " ", "{", "[1,", "nul", "{'a':1}", "\u0000").map<Mutation>((raw) => (r) => tag({ ...r, body: raw }, "body:malformed")),
  fc.tuple(lone, fc.boolean(), fc.nat()).map<Mutation>(([bad, asKey, at]) => (r) =>
    tag({ ...r, body: poison(JSON.parse(r.body!), bad, asKey, at) }, "body:lone-surrogate")),
  fc.tuple(nul, fc.boolean(), fc.nat()).map<Mutation>(([bad, asKey, at]) => (r) =>
    tag({ ...r, body: poison(JSON.parse(r.body!), bad, asKey, at) }, "body:nul")),
  fc.tuple(fc.oneof(prototypeName, text.filter((k) => k.length > 0 && !FieldNames.has(k))), fc.jsonValue({ maxDepth: 2 })).map<Mutation>(([key, value]) => (r) =>
    tag({ ...r, body: `${r.body!.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(value) ?? "null"}}` }, "body:unknown-field")),
  fc.integer({ min: 257, max: 400 }).map<Mutation>((depth) => (r) =>
    tag({ ...r, body: `${r.body!.slice(0, -1)},"deep":${"[".repeat(depth)}${"]".repeat(depth)}}` }, "body:too-deep")),
  // Each literal is wrong for the first leaf of every route's body (kind, prompt, name, amount_micros, enabled, and
  // limits.period: the first field of an object field is followed, since an empty object is a valid merge patch).
  fc.constantFrom("1e400", "-1", "1.5", "null", "[]", "{}", "true", "9007199254740993").map<Mutation>((literal) => (r) => {
    const parsed = JSON.parse(r.body!) as Record<string, unknown>
    let holder = parsed
    let field = Object.keys(holder)[0]!
    while (typeof holder[field] === "object" && holder[field] !== null && !Array.isArray(holder[field])) {
      holder = holder[field] as Record<string, unknown>
      field = Object.keys(holder)[0]!
    }
    return tag({ ...r, body: JSON.stringify(parsed).replace(`"${field}":${JSON.stringify(holder[field])}`, `"${field}":${literal}`) }, "body:wrong-type")
  }),
  fc.constantFrom(undefined, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "application/jsonx", "text/json").map<Mutation>(
    (type) => (r) => tag(withHeader(r, "content-type", type), "body:content-type")
  ),
  fc.constant<Mutation>((r, route) =>
    tag({ ...r, body: `{"pad":"${"x".repeat((route.style === "json" ? 4 : 1) * 1_048_576 + 10)}"}` }, "body:too-large"))
)

const percentUnstorable = fc.constantFrom("%00", "%ED%A0%80", "%ED%BF%BF", "%C0%80", "%FF", "a%00b")

/** Changes of the query string (every `/v1` route refuses parameters it does not define). */
const query: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.stringMatching(/^[a-z_]{1,12}$/), fc.stringMatching(/^[A-Za-z0-9]{0,8}$/)).map<Mutation>(([name, value]) => (r, route) =>
    tag({ ...r, path: `${r.path}${r.path.includes("?") ? "&" : "?"}${route.method === "GET" && ["limit", "offset", "start_at", "end_at", "cursor", "key_id", "group_by", "format"].includes(name) ? `${name}x` : name}=${value}` }, "query:unknown")),
  fc.constantFrom("limit=1&limit=2", "start_at=2026-01-01T00:00:00Z", "limit=-1e999", "offset=1.5", "limit=%00", "start_at=%ED%A0%80&end_at=2026-01-01T00:00:00Z").map<Mutation>(
    (q) => (r, route) => {
      const refusing = route.path({ secret: "", keyId: "", runId: "" }).match(/^\/v1\/(usage|runs)$/) !== null
        ? q
        : `${q}&zz=1`
      return tag({ ...r, path: `${r.path}${r.path.includes("?") ? "&" : "?"}${refusing}` }, "query:malformed")
    }),
  percentUnstorable.map<Mutation>((bad) => (r) => tag({ ...r, path: `${r.path}?${bad}=1` }, "query:unstorable-name"))
)

/** Changes of the path: another id, an odd spelling, a path that does not exist. */
const path: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(percentUnstorable, fc.stringMatching(/^[a-z0-9_]{0,10}$/)).map<Mutation>(([bad, rest]) => (r, route, c) => {
    const original = route.path(c)
    const swapped = original.replace(c.keyId, `key_${rest}${bad}`).replace(c.runId, `run_${rest}${bad}`)
    return tag({ ...r, path: swapped === original ? `${original}/${bad}` : swapped }, "path:unstorable-id")
  }),
  fc.constantFrom("/", "//", "/..", "/%2e%2e", "/%2F", "/.", "/x").map<Mutation>((suffix) => (r) =>
    tag({ ...r, path: `${r.path.split("?")[0]}${suffix}` }, "path:odd-suffix")),
  fc.constant<Mutation>((r) => tag({ ...r, path: r.path.toUpperCase() }, "path:case")),
  fc.stringMatching(/^[a-z]{1,8}$/).map<Mutation>((segment) => (r) => tag({ ...r, path: `/v1/${segment}zz/${segment}` }, "path:unknown"))
)

const Verbs = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] as const

/** A method no route of the path serves (so it can never land on another valid route, such as DELETE on a key). */
const method: fc.Arbitrary<Mutation> = fc.nat().map<Mutation>((pick) => (r, route, context) => {
  const served = new Set(Routes.filter((other) => other.path(context) === route.path(context)).map((other) => other.method))
  const unserved = Verbs.filter((verb) => !served.has(verb))
  return tag({ ...r, method: unserved[pick % unserved.length]! }, "method:wrong")
})

/** A bad idempotency key on the route that requires one (or its absence). */
const idempotency: fc.Arbitrary<Mutation> = fc.constantFrom<string | undefined>(
  undefined,
  "",
  "has space",
  "x".repeat(256),
  "caf\u00e9",
  "tab\tkey"
).map<Mutation>((key) => (r) => tag(withHeader(r, "idempotency-key", key === undefined ? undefined : Buffer.from(key, "utf8").toString("latin1")), "header:idempotency-key"))

/** A change that refuses nothing alone: an `x-request-id` the service must echo or replace. */
const requestId: fc.Arbitrary<Mutation> = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._-]{1,128}$/),
  fc.constantFrom("bad id!", "x".repeat(129), "ü", "", "a/b")
).map<Mutation>((id) => (r) => tag(withHeader(r, "x-request-id", Buffer.from(id, "utf8").toString("latin1")), "header:request-id"))

const refusing = (route: Route): fc.Arbitrary<Mutation> => {
  const options: Array<fc.Arbitrary<Mutation>> = [credential, query, path, method]
  if (route.body !== undefined) options.push(body, body)
  if (route.idempotency === "required") options.push(idempotency)
  return fc.oneof(...options)
}

/** A request the contract must refuse, for any route, maybe with an odd request id too. */
export const hostileRequest = (context: FuzzContext): fc.Arbitrary<HostileRequest> =>
  fc.oneof(...Routes.map((route) => ({ arbitrary: fc.constant(route), weight: route.body === undefined ? 1 : 4 }))).chain((route) =>
    fc.tuple(refusing(route), fc.option(requestId, { nil: undefined })).map(([mutation, id]) => {
      const base: HostileRequest = {
        method: route.method,
        path: route.path(context),
        headers: {
          authorization: `Bearer ${context.secret}`,
          ...(route.body === undefined ? {} : { "content-type": "application/json" }),
          ...(route.idempotency === "required" ? { "idempotency-key": `fuzz-${Math.random().toString(36).slice(2)}` } : {})
        },
        ...(route.body === undefined ? {} : { body: JSON.stringify(route.body(context)) }),
        classes: []
      }
      const mutated = mutation(base, route, context)
      return id === undefined ? mutated : id(mutated, route, context)
    })
  )

/** A body that is hostile yet valid: prototype names and `__proto__` as question ids, option names and state keys. */
export const hostileValidRun: fc.Arbitrary<{ readonly body: string; readonly questionIds: ReadonlyArray<string> }> = fc
  .tuple(
    fc.uniqueArray(prototypeName, { minLength: 1, maxLength: 4 }),
    fc.uniqueArray(fc.oneof(prototypeName, fc.stringMatching(/^[a-z]{1,6}$/)), { minLength: 2, maxLength: 4 }),
    fc.uniqueArray(fc.oneof(prototypeName, fc.stringMatching(/^[a-z]{1,6}$/)), { minLength: 1, maxLength: 3 })
  )
  .map(([ids, options, stateKeys]) => {
    const questions = ids.map((id, index) =>
      index % 2 === 0
        ? `${JSON.stringify(id)}:{"type":"noul","instructions":"Is it about ${id}?"}`
        : `${JSON.stringify(id)}:{"type":"choice","instructions":"Which?","criteria":{${options.map((o) => `${JSON.stringify(o)}:null`).join(",")}}}`
    )
    const state = stateKeys.map((key) => `${JSON.stringify(key)}:{"note":"a value for ${key}"}`).join(",")
    return { body: `{"kind":"decision","state":{${state}},"questions":{${questions.join(",")}}}`, questionIds: ids }
  })
