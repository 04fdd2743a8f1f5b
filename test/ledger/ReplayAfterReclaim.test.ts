/**
 * The exact way of admission reads the run a key owns under the organization's lock, and again after it takes back
 * unused slices to cover a run (Admission.ts). The fast way of another process stores runs without that lock, so a
 * run under the same key may appear between the two reads: with the same body it is replayed (the contract's
 * `200`/`202` with the stored run), never refused `409 idempotency_conflict`. The test makes that moment certain: a
 * trigger stores the other process's run inside the reclaim itself, so the second read finds it.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import { PgPools } from "../../src/db/PgPool.js"
import { admitExact } from "../../src/ledger/Admission.js"
import { CreditStore } from "../../src/ledger/CreditStore.js"
import { periodOf, QuotaLedger } from "../../src/ledger/QuotaLedger.js"
import { uuidFromHex, uuidv7Hex } from "../../src/ids/Ids.js"
import { grantCredit } from "../support/Invariants.js"
import { freshKey } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "60 seconds" })("exact admission", (it) => {
  describe("a run stored under the key while slices are taken back", () => {
    it.effect("is replayed when the body is the same, not refused as a conflict", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { asyncCommit } = yield* PgPools
        const rules = { quota: yield* QuotaLedger, credit: yield* CreditStore }
        const { organizationId } = yield* seedOrganization({ billing: true })
        yield* grantCredit(organizationId, 20_000)
        const key = freshKey()
        const tag = `t_owner_${uuidv7Hex(Date.now()).slice(-12)}`
        const holder = `other-process-${tag}`
        const now = new Date()
        const period = periodOf(now)
        const digest = "digest-of-the-body"
        // Another process's slice holds all of the free credit, unused: the exact way finds too little free and
        // takes it back, then reads the key again.
        yield* sql`INSERT INTO ledger_holders (id) VALUES (${holder})`
        yield* sql`INSERT INTO ledger_leases (id, holder, organization_id, period, billing, spend_limited, tokens_limited,
            credit_micros) VALUES (${uuidFromHex(uuidv7Hex(Date.now()))}::uuid, ${holder}, ${organizationId}, ${period}::date,
            true, false, false, 20000)`
        // That process's run under the key commits meanwhile: stored by the reclaim's own update.
        yield* sql.unsafe(`CREATE FUNCTION ${tag}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
            INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, period, hold_micros,
              hold_tokens, hold_credit, held, deadline_at)
            VALUES (gen_random_uuid(), NEW.organization_id, 'runs', '${key}', 'decision', 'pending', '${digest}',
              NEW.period, 0, 0, false, false, now() + interval '1 minute')
            ON CONFLICT DO NOTHING;
            RETURN NEW;
          END $$`)
        yield* sql.unsafe(`CREATE TRIGGER ${tag} AFTER UPDATE ON ledger_leases FOR EACH ROW
          WHEN (NEW.organization_id = '${organizationId}') EXECUTE FUNCTION ${tag}()`)
        const decided = yield* Effect.exit(admitExact(rules, asyncCommit, {
          id: uuidFromHex(uuidv7Hex(Date.now())),
          organizationId,
          origin: "runs",
          idempotencyKey: key,
          kind: "decision",
          inputDigest: digest,
          period,
          holdMicros: 20_000,
          holdTokens: 400,
          createdAt: now,
          deadlineAt: new Date(now.getTime() + 60_000),
          holder: "this-process",
          keyId: null
        }))
        yield* sql.unsafe(`DROP TRIGGER ${tag} ON ledger_leases`)
        yield* sql.unsafe(`DROP FUNCTION ${tag}()`)
        yield* sql`DELETE FROM ledger_leases WHERE holder = ${holder}`
        yield* sql`DELETE FROM ledger_holders WHERE id = ${holder}`
        assert.isTrue(Exit.isSuccess(decided))
        const { outcome, reclaimed } = Exit.isSuccess(decided) ? decided.value : { outcome: null, reclaimed: [] }
        assert.strictEqual(reclaimed.length, 1, "the other process's unused slice was taken back")
        assert.strictEqual(outcome?._tag, "Replayed")
        const [owners] = yield* sql<{ runs: number }>`SELECT count(*)::int AS runs FROM runs
          WHERE organization_id = ${organizationId} AND idempotency_key = ${key}`
        assert.strictEqual(owners!.runs, 1, "one run under the key")
      }))
  })
})
