/**
 * Organizations and their members: creation (with an owner member, an owner API key holding all nine scopes and,
 * for a verified owner's first organization, the sign-up credit, in one transaction), membership, and the embedded
 * database's first-start bootstrap.
 */
import { Context, Data, Effect, Layer, Option } from "effect"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import { Roles, Scopes } from "../../schema/Scope.js"
import { SignupCredit, type SignupCreditService } from "../billing/SignupCredit.js"
import { newOrganizationId, newUserId } from "../ids/Ids.js"
import { Keys, type KeysService } from "../keys/Keys.js"
import { CreditStore, type CreditStoreService } from "../ledger/CreditStore.js"
import {
  type MemberInput,
  type MemberRow,
  type OrganizationRow,
  OrganizationsRepo,
  type OrganizationsRepoService
} from "./OrganizationsRepo.js"

/** What `org create` asks for. */
export interface NewOrganization {
  readonly name: string
  readonly ownerEmail: string
  readonly ownerId?: string | undefined
  readonly verified: boolean
  readonly billing: boolean
}

/** A created organization with its owner's key (the secret is shown once). */
export interface CreatedOrganization {
  readonly organization_id: string
  readonly owner_user_id: string
  readonly key: { readonly id: string; readonly secret: string }
}

/** An operator input that cannot be accepted. */
export class InvalidInput extends Data.TaggedError("InvalidInput")<{ readonly message: string }> {}

/** The organizations service's operations. */
export interface OrganizationsService {
  /** Creates an organization, its owner member and an owner key with all nine scopes. */
  readonly create: (input: NewOrganization) => Effect.Effect<CreatedOrganization, InvalidInput | DatabaseUnavailable>
  /** Adds a member (or updates an existing member's role, e-mail and verification). */
  readonly addMember: (input: MemberInput) => Effect.Effect<MemberRow, InvalidInput | DatabaseUnavailable>
  /** Fails unless the organization exists; returns it. */
  readonly requireOrganization: (id: string) => Effect.Effect<OrganizationRow, InvalidInput | DatabaseUnavailable>
  /** Fails unless the user is a member of the organization; returns the member. */
  readonly requireMember: (organizationId: string, userId: string) => Effect.Effect<MemberRow, InvalidInput | DatabaseUnavailable>
  /** Creates the `default` organization when none exists yet; returns it, or none when one already existed. */
  readonly bootstrap: Effect.Effect<Option.Option<CreatedOrganization>, InvalidInput | DatabaseUnavailable>
}

const UserIdPattern = /^[A-Za-z0-9._@:-]{1,128}$/
const EmailPattern = /^[^\s@]+@[^\s@]+$/

/** What the operations below stand on. */
interface Deps {
  readonly repo: OrganizationsRepoService
  readonly keys: KeysService
  readonly credit: CreditStoreService
  readonly signupCredit: SignupCreditService
}

const validateMember = (userId: string, email: string, role: string) =>
  !UserIdPattern.test(userId)
    ? Effect.fail(new InvalidInput({ message: "a user id is 1 to 128 characters of A-Z a-z 0-9 . _ @ : -" }))
    : !EmailPattern.test(email)
    ? Effect.fail(new InvalidInput({ message: `"${email}" is not an e-mail address` }))
    : !(Roles as ReadonlyArray<string>).includes(role)
    ? Effect.fail(new InvalidInput({ message: `role must be one of ${Roles.join(", ")}` }))
    : Effect.void

const requireOrganization = ({ repo }: Deps): OrganizationsService["requireOrganization"] => (id) =>
  Effect.flatMap(repo.getOrganization(id), Option.match({
    onNone: () => Effect.fail(new InvalidInput({ message: `no organization ${id}` })),
    onSome: Effect.succeed
  }))

const create = ({ credit, keys, repo, signupCredit }: Deps): OrganizationsService["create"] => (input) =>
  Effect.gen(function*() {
    const name = input.name.trim()
    if (name === "" || name.length > 200) return yield* Effect.fail(new InvalidInput({ message: "a name is 1 to 200 characters" }))
    const ownerId = input.ownerId ?? newUserId()
    yield* validateMember(ownerId, input.ownerEmail, "owner")
    const organizationId = newOrganizationId()
    const key = yield* repo.transaction(Effect.gen(function*() {
      yield* repo.insertOrganization({ id: organizationId, name, billingEnabled: input.billing })
      yield* credit.open(organizationId)
      yield* repo.upsertMember({
        organizationId,
        userId: ownerId,
        email: input.ownerEmail.trim().toLowerCase(),
        verified: input.verified,
        role: "owner"
      })
      if (input.verified) yield* signupCredit.grant(organizationId, input.ownerEmail)
      return yield* keys.issue({
        organizationId,
        name: "owner",
        principal: { type: "user", id: ownerId },
        scopes: Scopes,
        createdBy: ownerId
      })
    }))
    return { organization_id: organizationId, owner_user_id: ownerId, key: { id: key.id, secret: key.secret } }
  })

const make = Effect.gen(function*() {
  const deps: Deps = {
    repo: yield* OrganizationsRepo,
    keys: yield* Keys,
    credit: yield* CreditStore,
    signupCredit: yield* SignupCredit
  }
  const { repo } = deps
  const createOrganization = create(deps)
  const requireOrganizationOf = requireOrganization(deps)
  return Organizations.of({
    create: createOrganization,
    addMember: (input) =>
      Effect.gen(function*() {
        yield* validateMember(input.userId, input.email, input.role)
        yield* requireOrganizationOf(input.organizationId)
        return yield* repo.upsertMember({ ...input, email: input.email.trim().toLowerCase() })
      }),
    requireOrganization: requireOrganizationOf,
    requireMember: (organizationId, userId) =>
      Effect.flatMap(repo.findMember(organizationId, userId), Option.match({
        onNone: () => Effect.fail(new InvalidInput({ message: `${userId} is not a member of ${organizationId}` })),
        onSome: Effect.succeed
      })),
    bootstrap: Effect.gen(function*() {
      if (yield* repo.anyOrganization) return Option.none<CreatedOrganization>()
      return Option.some(
        yield* createOrganization({ name: "default", ownerEmail: "owner@localhost", verified: false, billing: false })
      )
    })
  })
})

/** The organizations service. */
export class Organizations extends Context.Service<Organizations, OrganizationsService>()("Organizations") {
  /** Organizations over their repository, the keys service, the credit store and the sign-up credit. */
  static readonly layer = Layer.effect(Organizations, make)
}
