/**
 * The services every part of the service stands on: organizations and members, API keys with the credential
 * verifier, and the ledgers of money (credit, quotas, runs). The operator CLI needs only these; the server adds the
 * model, the router, usage and billing on top (Server.ts).
 */
import { Layer } from "effect"
import { CredentialVerifier } from "./auth/CredentialVerifier.js"
import { LastUsed } from "./auth/LastUsed.js"
import { SessionKeys } from "./auth/SessionKeys.js"
import { BillingRepo } from "./billing/BillingRepo.js"
import { CreditStore } from "./ledger/CreditStore.js"
import { Keys } from "./keys/Keys.js"
import { KeysRepo } from "./keys/KeysRepo.js"
import { Organizations } from "./organizations/Organizations.js"
import { OrganizationsRepo } from "./organizations/OrganizationsRepo.js"
import { RunsRepo } from "./runs/RunsRepo.js"
import { QuotaLedger } from "./ledger/QuotaLedger.js"

/** The credential verifier with the key and member tables it reads. */
export const VerifierLive = CredentialVerifier.layer.pipe(
  Layer.provide([SessionKeys.layer, LastUsed.layer]),
  Layer.provideMerge(Layer.mergeAll(KeysRepo.layer, OrganizationsRepo.layer))
)

/** Credit, quotas and runs, whose rows admission and settlement change together. */
export const LedgersLive = Layer.mergeAll(CreditStore.layer, QuotaLedger.layer, RunsRepo.layer)

/** Organizations, members, keys, credit and quotas. */
export const DirectoryLive = Organizations.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(Keys.layer, BillingRepo.layer, LedgersLive)),
  Layer.provideMerge(VerifierLive)
)
