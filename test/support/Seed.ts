/**
 * Test data made through the services (as an operator would through the CLI): organizations with an owner key,
 * members, and keys holding exactly the scopes a test needs.
 */
import { Effect } from "effect"
import type { Scope } from "../../schema/Scope.js"
import { Keys } from "../../src/keys/Keys.js"
import { Organizations } from "../../src/organizations/Organizations.js"
import { OrganizationsRepo } from "../../src/organizations/OrganizationsRepo.js"

let counter = 0

/** A new organization with its owner; returns ids and the owner key's secret. */
export const seedOrganization = (options: { readonly billing?: boolean; readonly verified?: boolean; readonly email?: string } = {}) =>
  Effect.gen(function*() {
    const organizations = yield* Organizations
    counter += 1
    const created = yield* organizations.create({
      name: `Test org ${counter}`,
      ownerEmail: options.email ?? `owner${counter}.${Date.now()}@example.com`,
      verified: options.verified ?? false,
      billing: options.billing ?? false
    })
    return {
      organizationId: created.organization_id,
      ownerId: created.owner_user_id,
      ownerKeyId: created.key.id,
      secret: created.key.secret
    }
  })

/** Adds a member with a role (any string: a role outside the table is allowed here, as data from elsewhere). */
export const seedMember = (organizationId: string, userId: string, role: string) =>
  Effect.flatMap(OrganizationsRepo, (repo) =>
    repo.upsertMember({ organizationId, userId, email: `${userId}@example.com`, verified: true, role }))

/** A key of an organization acting as a user, holding exactly these scopes. */
export const seedKey = (organizationId: string, userId: string, scopes: ReadonlyArray<Scope>, name = "test") =>
  Effect.flatMap(Keys, (keys) =>
    keys.issue({ organizationId, name, principal: { type: "user", id: userId }, scopes, createdBy: userId }))
