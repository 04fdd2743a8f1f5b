/**
 * What authentication reads of organization members, as a port: `auth/` declares it, `organizations/` implements
 * it over the `members` table (`OrganizationsRepo.layer` provides it). A console session's scopes are its member's
 * role's.
 */
import { Context } from "effect"
import type { Effect, Option } from "effect"
import type { DatabaseUnavailable } from "../../schema/Errors.js"

/** The member lookup authentication needs. */
export interface MemberRolesService {
  /** The role of a user in an organization; none when the user is not a member. */
  readonly roleOf: (organizationId: string, userId: string) => Effect.Effect<Option.Option<string>, DatabaseUnavailable>
}

/** The roles of members, by organization and user. */
export class MemberRoles extends Context.Service<MemberRoles, MemberRolesService>()("MemberRoles") {}
