/**
 * The design card's shape on `POST /v1/runs` (DESIGN.md, "The four layers the handlers compose"), checked by the
 * compiler: the runs group's layer requires the credential verifier, the quota ledger, the credit store and the model
 * provider, and neither the run ledger nor the runs service (the machinery those services are composed into is
 * provided inside the group, not a second owner beside them). `npx tsc --noEmit` fails when the requirements drift;
 * the test below restates the same facts for the test run.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Layer } from "effect"
import type { CredentialVerifier } from "../../src/auth/CredentialVerifier.js"
import type { CreditStore } from "../../src/ledger/CreditStore.js"
import type { QuotaLedger } from "../../src/ledger/QuotaLedger.js"
import type { RunLedger } from "../../src/ledger/RunLedger.js"
import type { ModelProvider } from "../../src/providers/ModelProvider.js"
import type { Runs } from "../../src/runs/Runs.js"
import type { RunsHttp } from "../../src/runs/RunsHttp.js"

/** What the runs group's layer needs from the process. */
type Requirements = Layer.Services<typeof RunsHttp>

/** true when every member of `Some` is among `All`. */
type Includes<All, Some> = [Some] extends [All] ? true : false

const composes: {
  readonly verifier: Includes<Requirements, CredentialVerifier>
  readonly quota: Includes<Requirements, QuotaLedger>
  readonly credit: Includes<Requirements, CreditStore>
  readonly provider: Includes<Requirements, ModelProvider>
  readonly runLedger: Includes<Requirements, RunLedger>
  readonly runs: Includes<Requirements, Runs>
} = { verifier: true, quota: true, credit: true, provider: true, runLedger: false, runs: false }

describe("the runs group's layer", () => {
  it("requires the credential verifier, the quota ledger, the credit store and the model provider", () => {
    expect([composes.verifier, composes.quota, composes.credit, composes.provider]).toEqual([true, true, true, true])
  })

  it("requires neither the run ledger nor the runs service: both are composed inside it", () => {
    expect([composes.runLedger, composes.runs]).toEqual([false, false])
  })
})
