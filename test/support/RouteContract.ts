/**
 * The contract every `/v1` route keeps, as table-driven suites each group's tests run over its own routes:
 * authentication (401 codes, no `WWW-Authenticate`, routing before the credential), scopes (a key holding any one of
 * the nine scopes gets `403 scope_denied` naming the route's scope unless it is that scope) and roles (a console
 * session of each role of the table, and of a role outside it, against the same rule).
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import type { ServerAddress } from "../../src/server/Listen.js"
import { Scopes, scopesOfRole, type Scope } from "../../schema/Scope.js"
import { call, codeOf } from "./Api.js"
import { FakeConsole } from "./FakeConsole.js"
import { seedKey, seedMember, seedOrganization } from "./Seed.js"

/** A seeded organization, as routes see it. */
export interface SeededOrganization {
  readonly organizationId: string
  readonly ownerId: string
  readonly ownerKeyId: string
  readonly secret: string
}

/** One route under test: how to call it with a valid request once authorized. */
export interface RouteCase<R = never> {
  readonly method: string
  readonly scope: Scope
  readonly path: (organization: SeededOrganization) => Effect.Effect<string, unknown, R>
  readonly body?: unknown
  readonly headers?: Record<string, string>
}

/** A route with a fixed path. */
export const route = (method: string, path: string, scope: Scope, extra: { body?: unknown; headers?: Record<string, string> } = {}): RouteCase =>
  ({ method, scope, path: () => Effect.succeed(path), ...extra })

const label = (route: RouteCase<any>) => `${route.method} ${route.scope}`

/** Checks one answer against the scope rule. */
const expectScopeRule = (response: { status: number; text: string; headers: Record<string, unknown> }, held: boolean, scope: Scope, what: string) => {
  const code = codeOf(response as any)
  if (held) {
    assert.isFalse(response.status === 403 && code === "scope_denied", `${what}: should pass the scope check, got ${response.status} ${response.text.slice(0, 200)}`)
  } else {
    assert.strictEqual(response.status, 403, `${what}: ${response.text.slice(0, 200)}`)
    assert.strictEqual(code, "scope_denied", what)
    assert.include(JSON.parse(response.text).error.message, scope, what)
    assert.isString(response.headers["x-request-id"])
  }
}

/** For each route: a key holding each single scope passes the scope check only with the route's scope. */
export const checkScopes = <R>(routes: ReadonlyArray<RouteCase<R>>) =>
  Effect.gen(function*() {
    const organization = yield* seedOrganization()
    for (const target of routes) {
      for (const scope of Scopes) {
        const key = yield* seedKey(organization.organizationId, organization.ownerId, [scope])
        const path = yield* target.path(organization)
        const response = yield* call(target.method, path, { secret: key.secret, body: target.body, headers: target.headers ?? {} })
        expectScopeRule(response, scope === target.scope, target.scope, `${label(target)} ${path} with ${scope}`)
      }
    }
  })

/** For each route: 401s for missing, odd and unknown credentials, without `WWW-Authenticate`; 405 before any. */
export const checkAuthentication = <R>(routes: ReadonlyArray<RouteCase<R>>) =>
  Effect.gen(function*() {
    const organization = yield* seedOrganization()
    const unknownKey = `otsk_${"0".repeat(64)}`
    for (const target of routes) {
      const path = yield* target.path(organization)
      const cases: Array<[Record<string, string>, string]> = [
        [{}, "missing_credentials"],
        [{ authorization: "Basic dXNlcjpwYXNz" }, "missing_credentials"],
        [{ authorization: "Bearer" }, "missing_credentials"],
        [{ authorization: "Bearer    " }, "missing_credentials"],
        [{ authorization: "Token abc" }, "missing_credentials"],
        [{ authorization: "Bearer otsk_short" }, "invalid_credential"],
        [{ authorization: `Bearer ${unknownKey.toUpperCase().replace("OTSK", "otsk")}` }, "invalid_credential"],
        [{ authorization: `Bearer ${unknownKey}` }, "invalid_credential"],
        [{ authorization: "Bearer not-a-credential" }, "invalid_credential"]
      ]
      for (const [headers, code] of cases) {
        const response = yield* call(target.method, path, { body: target.body, headers: { ...headers, ...target.headers } })
        const what = `${target.method} ${path} with ${JSON.stringify(headers)}`
        assert.strictEqual(response.status, 401, what)
        assert.strictEqual(codeOf(response), code, what)
        assert.isUndefined(response.headers["www-authenticate"], what)
        assert.isString(response.headers["x-request-id"], what)
      }
      const scheme = yield* call(target.method, path, { body: target.body, headers: { authorization: `bEaReR ${organization.secret}`, ...target.headers } })
      assert.notStrictEqual(scheme.status, 401, `${target.method} ${path}: the scheme is case-insensitive`)
      const oversized = yield* call(target.method, path, { rawBody: "x".repeat(5 * 1024 * 1024), headers: target.headers ?? {} })
      assert.strictEqual(oversized.status, 401, `${target.method} ${path}: the credential is checked before the body`)
    }
  })

/** For each role of the table and one outside it: a console session passes the scope check only with the scope. */
export const checkRoles = <R>(routes: ReadonlyArray<RouteCase<R>>) =>
  Effect.gen(function*() {
    const console = yield* FakeConsole
    const organization = yield* seedOrganization()
    for (const role of ["owner", "admin", "member", "billing", "viewer", "auditor"]) {
      const userId = `user_${role}`
      yield* seedMember(organization.organizationId, userId, role)
      const token = yield* console.sign({ sub: userId, org_id: organization.organizationId })
      const held = new Set(scopesOfRole(role))
      for (const target of routes) {
        const path = yield* target.path(organization)
        const response = yield* call(target.method, path, { secret: token, body: target.body, headers: target.headers ?? {} })
        expectScopeRule(response, held.has(target.scope), target.scope, `${label(target)} ${path} as ${role}`)
      }
    }
  })

/** Type of the services these checks need. */
export type ContractServices = ServerAddress
