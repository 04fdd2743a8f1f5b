/**
 * The `organizations` and `members` tables (only this module writes them). Its layer also provides the ports other
 * folders read them through: authentication's `MemberRoles` and billing's `OrganizationNames`. Database failures
 * are mapped here, once (db/Unavailable.ts), also at the edge of the transaction that creates an organization.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import { MemberRoles } from "../auth/MemberRoles.js"
import { OrganizationNames } from "../billing/OrganizationNames.js"
import { orUnavailable, transactionOrUnavailable } from "../db/Unavailable.js"

/** A member of an organization. */
export interface MemberRow {
  readonly organization_id: string
  readonly user_id: string
  readonly email: string
  readonly email_verified: boolean
  readonly role: string
}

/** An organization. */
export interface OrganizationRow {
  readonly id: string
  readonly name: string
  readonly billing_enabled: boolean
  readonly created_at: Date
}

/** A member to add, or whose role, e-mail and verification to change. */
export interface MemberInput {
  readonly organizationId: string
  readonly userId: string
  readonly email: string
  readonly verified: boolean
  readonly role: string
}

/** The repository's operations. */
export interface OrganizationsRepoService {
  /** Stores an organization. */
  readonly insertOrganization: (
    organization: { readonly id: string; readonly name: string; readonly billingEnabled: boolean }
  ) => Effect.Effect<void, DatabaseUnavailable>
  /** An organization by id. */
  readonly getOrganization: (id: string) => Effect.Effect<Option.Option<OrganizationRow>, DatabaseUnavailable>
  /** Whether any organization exists. */
  readonly anyOrganization: Effect.Effect<boolean, DatabaseUnavailable>
  /** Adds a member, or changes the role, e-mail and verification of an existing one. */
  readonly upsertMember: (member: MemberInput) => Effect.Effect<MemberRow, DatabaseUnavailable>
  /** A member of an organization. */
  readonly findMember: (organizationId: string, userId: string) => Effect.Effect<Option.Option<MemberRow>, DatabaseUnavailable>
  /**
   * Runs `effect` in one transaction (the operations above, and the other stores' called inside it, join it), with
   * database failures, the commit's included, mapped at the transaction's edge.
   */
  readonly transaction: <A, E, R>(
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, Exclude<E, SqlError.SqlError> | DatabaseUnavailable, R>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return OrganizationsRepo.of({
    insertOrganization: (organization) =>
      orUnavailable(
        sql`INSERT INTO organizations (id, name, billing_enabled)
          VALUES (${organization.id}, ${organization.name}, ${organization.billingEnabled})`
      ).pipe(Effect.asVoid),
    getOrganization: (id) =>
      orUnavailable(
        Effect.map(
          sql<OrganizationRow>`SELECT id, name, billing_enabled, created_at FROM organizations WHERE id = ${id}`,
          (rows) => Option.fromNullishOr(rows[0])
        )
      ),
    anyOrganization: orUnavailable(
      Effect.map(sql<{ present: boolean }>`SELECT EXISTS (SELECT 1 FROM organizations) AS present`, (rows) =>
        rows[0]?.present === true)
    ),
    upsertMember: (member) =>
      orUnavailable(
        Effect.map(
          sql<MemberRow>`INSERT INTO members (organization_id, user_id, email, email_verified, role)
            VALUES (${member.organizationId}, ${member.userId}, ${member.email}, ${member.verified}, ${member.role})
            ON CONFLICT (organization_id, user_id) DO UPDATE
              SET email = excluded.email, email_verified = excluded.email_verified, role = excluded.role
            RETURNING organization_id, user_id, email, email_verified, role`,
          (rows) => rows[0]!
        )
      ),
    findMember: (organizationId, userId) =>
      orUnavailable(
        Effect.map(
          sql<MemberRow>`SELECT organization_id, user_id, email, email_verified, role FROM members
            WHERE organization_id = ${organizationId} AND user_id = ${userId}`,
          (rows) => Option.fromNullishOr(rows[0])
        )
      ),
    transaction: (effect) => transactionOrUnavailable(sql, effect)
  })
})

/** Storage of organizations and their members. */
export class OrganizationsRepo extends Context.Service<OrganizationsRepo, OrganizationsRepoService>()("OrganizationsRepo") {
  /** The repository over the SQL client, with the ports over it: `MemberRoles` and `OrganizationNames`. */
  static readonly layer = Layer.effectContext(
    Effect.map(OrganizationsRepo, (repo) =>
      Context.make(
        MemberRoles,
        MemberRoles.of({
          roleOf: (organizationId, userId) =>
            Effect.map(repo.findMember(organizationId, userId), Option.map((member) => member.role))
        })
      ).pipe(Context.add(
        OrganizationNames,
        OrganizationNames.of({
          nameOf: (organizationId) => Effect.map(repo.getOrganization(organizationId), Option.map((row) => row.name))
        })
      )))
  ).pipe(Layer.provideMerge(Layer.effect(OrganizationsRepo, make)))
}
