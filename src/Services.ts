/**
 * The service layers, composed in one place. `DirectoryLive` is what every process stands on: organizations and
 * members, API keys with the credential verifier, and the ledgers of money (credit, quotas, runs); the operator CLI
 * needs only these. `ServicesLive` adds what the server's handlers compose on top: runs with the model provider, the
 * router, usage, billing and readiness. Each needs the SQL client and the settings; Server.ts puts them behind HTTP.
 */
import { Effect, Layer } from "effect"
import { CredentialVerifier } from "./auth/CredentialVerifier.js"
import { LastUsed } from "./auth/LastUsed.js"
import { SessionKeys } from "./auth/SessionKeys.js"
import { AutoRecharge } from "./billing/AutoRecharge.js"
import { Billing } from "./billing/Billing.js"
import { BillingRepo } from "./billing/BillingRepo.js"
import { LocalSigningKey, PaymentProcessorLive } from "./billing/PaymentProcessorLive.js"
import { SignupCredit } from "./billing/SignupCredit.js"
import { Readiness } from "./health/Readiness.js"
import { Keys } from "./keys/Keys.js"
import { KeysRepo } from "./keys/KeysRepo.js"
import { CallRecorder } from "./ledger/CallRecorder.js"
import { CreditStore } from "./ledger/CreditStore.js"
import { LedgerHolder } from "./ledger/Holder.js"
import { QuotaLedger } from "./ledger/QuotaLedger.js"
import { AfterSettlement, RunLedger } from "./ledger/RunLedger.js"
import { Organizations } from "./organizations/Organizations.js"
import { OrganizationsRepo } from "./organizations/OrganizationsRepo.js"
import { ModelProviderLive } from "./providers/ModelProviderLive.js"
import { ModelRouter } from "./router/ModelRouter.js"
import { RouterData } from "./router/RouterData.js"
import { RouterRepo } from "./router/RouterRepo.js"
import { Runs } from "./runs/Runs.js"
import { RunsRepo } from "./runs/RunsRepo.js"
import { Usage } from "./usage/Usage.js"
import { UsageRepo } from "./usage/UsageRepo.js"

/** The credential verifier with the key and member tables it reads (through KeyCredentials and MemberRoles). */
export const VerifierLive = CredentialVerifier.layer.pipe(
  Layer.provide([SessionKeys.layer, LastUsed.layer]),
  Layer.provideMerge(Layer.mergeAll(KeysRepo.layer, OrganizationsRepo.layer))
)

/** Credit, quotas and runs, whose rows admission and settlement change together. */
export const LedgersLive = Layer.mergeAll(CreditStore.layer, QuotaLedger.layer, RunsRepo.layer)

/** Organizations, members, keys, credit (with the sign-up credit) and quotas. */
export const DirectoryLive = Organizations.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(Keys.layer, SignupCredit.layer)),
  Layer.provideMerge(Layer.mergeAll(BillingRepo.layer, LedgersLive)),
  Layer.provideMerge(VerifierLive)
)

/** Auto-recharge after every settlement that leaves a balance under its threshold. */
const AfterSettlementLive = Layer.effect(AfterSettlement, Effect.map(AutoRecharge, (recharge) => recharge.afterSettlement))

const RunsLive = Runs.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(RunLedger.layer, CallRecorder.layer)),
  Layer.provideMerge(Layer.mergeAll(LedgersLive, ModelProviderLive, LedgerHolder.layer))
)

const UsageLive = Usage.layer.pipe(Layer.provide(Layer.mergeAll(UsageRepo.layer, QuotaLedger.layer)))

const RouterLive = ModelRouter.layer.pipe(
  Layer.provide(Layer.mergeAll(RouterData.layer, RouterRepo.layer)),
  Layer.provide(RunsLive)
)

const BillingLive = Layer.mergeAll(Billing.layer, AutoRecharge.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(BillingRepo.layer, PaymentProcessorLive)),
  Layer.provideMerge(LocalSigningKey.layer),
  Layer.provide(LedgersLive)
)

/** The services the handlers compose (each needs the SQL client and the settings). */
export const ServicesLive = Organizations.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(Readiness.layer, Keys.layer, SignupCredit.layer, RouterLive, UsageLive)),
  Layer.provideMerge(RunsLive),
  Layer.provideMerge(AfterSettlementLive),
  Layer.provideMerge(BillingLive),
  Layer.provideMerge(VerifierLive)
)
