/**
 * The `organizations` and `members` tables (only this module writes them).
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { orUnavailable } from "../db/Unavailable.js"

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

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return {
    /** Stores an organization. */
    insertOrganization: (organization: { id: string; name: string; billingEnabled: boolean }) =>
      orUnavailable(
        sql`INSERT INTO organizations (id, name, billing_enabled)
          VALUES (${organization.id}, ${organization.name}, ${organization.billingEnabled})`
      ).pipe(Effect.asVoid),
    /** An organization by id. */
    getOrganization: (id: string) =>
      orUnavailable(
        Effect.map(
          sql<OrganizationRow>`SELECT id, name, billing_enabled, created_at FROM organizations WHERE id = ${id}`,
          (rows) => Option.fromNullable(rows[0])
        )
      ),
    /** Whether any organization exists. */
    anyOrganization: orUnavailable(
      Effect.map(sql<{ present: boolean }>`SELECT EXISTS (SELECT 1 FROM organizations) AS present`, (rows) =>
        rows[0]?.present === true)
    ),
    /** Adds a member, or changes the role, e-mail and verification of an existing one. */
    upsertMember: (member: { organizationId: string; userId: string; email: string; verified: boolean; role: string }) =>
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
    /** A member of an organization. */
    findMember: (organizationId: string, userId: string) =>
      orUnavailable(
        Effect.map(
          sql<MemberRow>`SELECT organization_id, user_id, email, email_verified, role FROM members
            WHERE organization_id = ${organizationId} AND user_id = ${userId}`,
          (rows) => Option.fromNullable(rows[0])
        )
      )
  }
})

/** Storage of organizations and their members. */
export class OrganizationsRepo
  extends Context.Tag("OrganizationsRepo")<OrganizationsRepo, Effect.Effect.Success<typeof make>>()
{
  /** The repository over the SQL client. */
  static readonly layer = Layer.effect(OrganizationsRepo, make)
}
