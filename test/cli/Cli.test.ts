/**
 * The operator CLI against the database of a running server (PostgreSQL, or the embedded database through the
 * server's socket): each command prints one JSON object on stdout, errors go to stderr with a non-zero exit, and what
 * the CLI creates works over HTTP at once. Commands run in this process; the first of each kind also runs as a child
 * process, as an operator starts it (finding the server that owns the embedded files by itself).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, codeOf } from "../support/Api.js"
import { runCli, runCliProcess } from "../support/Cli.js"
import { TestServerLive } from "../support/TestServer.js"

/** Calls `attempt` until `done` holds of its result or `withinMs` have passed; returns the last result. */
const pollUntil = <A, E, R>(attempt: Effect.Effect<A, E, R>, done: (a: A) => boolean, withinMs: number) =>
  Effect.gen(function*() {
    const deadline = Date.now() + withinMs
    for (;;) {
      const result = yield* attempt
      if (done(result) || Date.now() >= deadline) return result
      yield* Effect.sleep("50 millis")
    }
  })

layer(TestServerLive(), { excludeTestServices: true, timeout: "180 seconds" })("operator CLI", (it) => {
  describe("org create, member add, key create, key revoke", () => {
    it.effect("work against the running server's database and print one JSON object each", () =>
      Effect.gen(function*() {
        const created = yield* runCliProcess(["org", "create", "--name", "Acme", "--owner-email", "Ops@Acme.example", "--owner-id", "user_ops", "--verified"])
        assert.strictEqual(created.code, 0, created.stderr)
        const organization = created.json()
        assert.match(organization.organization_id, /^org_[0-9a-f]{32}$/)
        assert.strictEqual(organization.owner_user_id, "user_ops")
        assert.match(organization.key.id, /^key_[0-9a-f]{32}$/)
        assert.match(organization.key.secret, /^otsk_[0-9a-f]{64}$/)
        const listed = yield* call("GET", "/v1/keys", { secret: organization.key.secret })
        assert.strictEqual(listed.status, 200)
        assert.strictEqual(listed.json().keys[0].scopes.length, 9)

        const member = yield* runCli(["member", "add", "--org", organization.organization_id, "--user", "user_dev", "--email", "dev@acme.example", "--role", "member"])
        assert.strictEqual(member.code, 0, member.stderr)
        assert.strictEqual(member.json().role, "member")

        const key = yield* runCli(["key", "create", "--org", organization.organization_id, "--user", "user_dev", "--name", "ci", "--scopes", "runs_read,keys_read"])
        assert.strictEqual(key.code, 0, key.stderr)
        const issued = key.json()
        assert.deepStrictEqual(Object.keys(issued).sort(), ["id", "secret"])
        const asDev = yield* call("GET", `/v1/keys/${issued.id}`, { secret: issued.secret })
        assert.strictEqual(asDev.status, 200)
        assert.deepStrictEqual(asDev.json().scopes, ["keys_read", "runs_read"])

        const revoked = yield* runCli(["key", "revoke", "--org", organization.organization_id, "--key", issued.id])
        assert.strictEqual(revoked.code, 0, revoked.stderr)
        assert.strictEqual(revoked.json().state, "revoked")
        const after = yield* pollUntil(
          call("GET", "/v1/keys", { secret: issued.secret }),
          (response) => codeOf(response) === "invalid_credential",
          1_100
        )
        assert.strictEqual(codeOf(after), "invalid_credential", "the server refuses the key revoked by the CLI within a second")
      }))

    it.effect("credit grant, billing enable/disable and quota set change what the API shows", () =>
      Effect.gen(function*() {
        const organization = (yield* runCli(["org", "create", "--name", "Billed", "--owner-email", "billed@example.com"])).json()
        const secret = organization.key.secret
        const enabled = yield* runCli(["billing", "enable", "--org", organization.organization_id])
        assert.deepStrictEqual(enabled.json(), { organization_id: organization.organization_id, billing_enabled: true })
        const granted = yield* runCli(["credit", "grant", "--org", organization.organization_id, "--amount-micros", "2500000", "--reason", "pilot credit"])
        assert.strictEqual(granted.code, 0, granted.stderr)
        assert.strictEqual(granted.json().balance_micros, 2_500_000)
        const billing = (yield* call("GET", "/v1/billing", { secret })).json()
        assert.strictEqual(billing.billing_enabled, true)
        assert.deepStrictEqual(billing.transactions.map((txn: any) => [txn.kind, txn.amount_micros, txn.description]), [["grant", 2_500_000, "pilot credit"]])
        const quota = yield* runCli(["quota", "set", "--org", organization.organization_id, "--spend-limit-micros", "100000", "--token-limit", "none"])
        assert.deepStrictEqual(quota.json(), { organization_id: organization.organization_id, period_spend_limit_micros: 100_000, period_token_limit: null })
        const disabled = yield* runCli(["billing", "disable", "--org", organization.organization_id])
        assert.strictEqual(disabled.json().billing_enabled, false)
        const bad = yield* runCli(["quota", "set", "--org", organization.organization_id, "--token-limit", "-1"])
        assert.notStrictEqual(bad.code, 0)
        assert.strictEqual(bad.stdout, "")
        const zero = yield* runCli(["credit", "grant", "--org", organization.organization_id, "--amount-micros", "0", "--reason", "x"])
        assert.notStrictEqual(zero.code, 0)
      }), { timeout: 180_000 })

    it.effect("--log-level shows the log lines from that level up, on stderr, beside the JSON on stdout", () =>
      Effect.gen(function*() {
        const quiet = yield* runCli(["migrate"])
        assert.strictEqual(quiet.code, 0, quiet.stderr)
        assert.deepStrictEqual(quiet.json(), { applied: [] })
        assert.notInclude(quiet.stderr, "level=DEBUG")
        const verbose = yield* runCli(["--log-level", "debug", "migrate"])
        assert.strictEqual(verbose.code, 0, verbose.stderr)
        assert.deepStrictEqual(verbose.json(), { applied: [] })
        assert.include(verbose.stderr, "level=DEBUG")
      }))

    it.effect("refuses bad input on stderr with a non-zero exit and prints nothing on stdout", () =>
      Effect.gen(function*() {
        const cases: Array<ReadonlyArray<string>> = [
          ["org", "create", "--name", "X", "--owner-email", "not-an-email"],
          ["member", "add", "--org", "org_missing", "--user", "u1", "--email", "u@x.io", "--role", "member"],
          ["key", "create", "--org", "org_missing", "--user", "u1", "--name", "n", "--scopes", "runs_read"],
          ["key", "create", "--org", "org_missing", "--user", "u1", "--name", "n", "--scopes", "root"],
          ["key", "revoke", "--org", "org_missing", "--key", "key_00000000000000000000000000000000"]
        ]
        for (const [index, args] of cases.entries()) {
          const result = yield* (index === 0 ? runCliProcess(args) : runCli(args))
          assert.notStrictEqual(result.code, 0, args.join(" "))
          assert.strictEqual(result.stdout, "", args.join(" "))
          assert.isAbove(result.stderr.trim().length, 0, args.join(" "))
        }
        const created = (yield* runCli(["org", "create", "--name", "Y", "--owner-email", "y@y.io"])).json()
        const member = yield* runCli(["member", "add", "--org", created.organization_id, "--user", "u2", "--email", "u2@y.io", "--role", "viewer"])
        assert.strictEqual(member.code, 0)
        const beyond = yield* runCli(["key", "create", "--org", created.organization_id, "--user", "u2", "--name", "n", "--scopes", "runs_write"])
        assert.notStrictEqual(beyond.code, 0)
        assert.include(beyond.stderr, "runs_write")
      }), { timeout: 180_000 })
  })
})
