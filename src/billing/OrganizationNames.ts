/**
 * What billing's pages read of organizations, as a port: `billing/` declares it, `organizations/` implements it over
 * its table (`OrganizationsRepo.layer` provides it), so billing never imports organizations (which calls billing
 * for the sign-up credit).
 */
import { Context } from "effect"
import type { Effect, Option } from "effect"
import type { DatabaseUnavailable } from "../../schema/Errors.js"

/** The organization lookup billing's pages need. */
export interface OrganizationNamesService {
  /** The name of an organization; none when there is no such organization. */
  readonly nameOf: (organizationId: string) => Effect.Effect<Option.Option<string>, DatabaseUnavailable>
}

/** Organization names, for the hosted checkout and portal pages. */
export class OrganizationNames extends Context.Service<OrganizationNames, OrganizationNamesService>()("OrganizationNames") {}
