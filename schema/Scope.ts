/**
 * The nine scopes and the five roles of the contract (spec, "The nine scopes", "Scopes by role"). The role table is
 * data: a role outside it holds no scope.
 */
import { Context, Schema } from "effect"

/** Every scope, in the spec's order. */
export const Scopes = [
  "runs_read",
  "runs_write",
  "usage_read",
  "billing_read",
  "billing_write",
  "keys_read",
  "keys_write",
  "members_read",
  "members_write"
] as const

/** One of the nine scopes. */
export type Scope = (typeof Scopes)[number]

/** The wire schema of a scope name. */
export const ScopeSchema = Schema.Literals(Scopes)

/** True when a string names a scope. */
export const isScope = (value: string): value is Scope => (Scopes as ReadonlyArray<string>).includes(value)

/** The scopes each role holds (spec, "Scopes by role"). */
export const RoleScopes: Readonly<Record<string, ReadonlyArray<Scope>>> = {
  owner: Scopes,
  admin: Scopes,
  member: ["runs_read", "runs_write", "usage_read", "billing_read", "keys_read", "keys_write", "members_read"],
  billing: ["usage_read", "billing_read", "billing_write", "members_read"],
  viewer: ["runs_read", "usage_read", "billing_read", "keys_read"]
}

/** The roles of the table. */
export const Roles = ["owner", "admin", "member", "billing", "viewer"] as const

/** The scopes of a role; none for a role outside the table. */
export const scopesOfRole = (role: string): ReadonlyArray<Scope> =>
  Object.prototype.hasOwnProperty.call(RoleScopes, role) ? RoleScopes[role]! : []

/** Endpoint annotation: the scope a `/v1` route needs, checked after the body is decoded. */
export class RequiredScope extends Context.Service<RequiredScope, Scope>()("arbiter/RequiredScope") {}
