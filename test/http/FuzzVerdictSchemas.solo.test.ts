/**
 * Property-based fuzzing of verdict schemas over real HTTP, against the service in its own process
 * (test/support/ProbedService.ts), while `/healthz` is probed.
 */
import * as SqlClient from "effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { ServerAddress } from "../../src/server/Listen.js"
import { grantCredit } from "../support/Invariants.js"
import { ProbedServiceLive, probeHealth } from "../support/ProbedService.js"
import { rawRequest } from "../support/RawHttp.js"
import { freshKey } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"

/**
 * Verdict schemas of every hostile shape (decisions.md, Verdict runs): wide, deep, with many patterns, huge enums and
 * reference chains, on either side of each bound (2,000 schema nodes, 256 patterns, 32 levels). Each answers by the
 * rule, `400 invalid_verdict_schema` past a bound or for a flaw, else `503 no_route_available`, never another 5xx;
 * nothing is charged (the 503s store their pending runs and nothing else); and `/healthz` keeps answering within 50 ms
 * of the service's own work while the refusals are checked.
 */
describe("POST /v1/runs verdict schemas", () => {
  const VerdictRefusals = 120
  const VerdictValid = 40

  interface VerdictShape {
    readonly name: string
    readonly schema: Record<string, unknown>
    /** The words of the refusal, or undefined when the schema is valid. */
    readonly refusal: string | undefined
  }

  const count = (n: number) => Array.from({ length: n }, (_, i) => i)

  /** A subschema that is valid, or has a flaw that is not a bound (an unresolvable reference, an invalid pattern). */
  const flaw = fc.constantFrom<readonly [Record<string, unknown>, string | undefined]>(
    [{}, undefined],
    [{ $ref: "#/$defs/missing" }, "does not resolve inside the schema"],
    [{ pattern: "([a-z]" }, "not a usable JSON Schema: pattern"]
  )

  const past = (value: number, bound: number, words: string) => (value > bound ? words : undefined)

  const wide = fc.tuple(fc.integer({ min: 1, max: 3_000 }), fc.boolean()).map(([n, booleans]): VerdictShape => ({
    name: `wide ${n}`,
    schema: { type: "object", properties: Object.fromEntries(count(n).map((i) => [`k${i}`, booleans ? true : { type: "string" }])) },
    refusal: past(1 + n, 2_000, "more than 2,000 schema nodes")
  }))

  const deep = fc.integer({ min: 1, max: 200 }).map((levels): VerdictShape => {
    let schema: Record<string, unknown> = { type: "string" }
    for (let level = 1; level < levels; level++) schema = { not: schema }
    return { name: `deep ${levels}`, schema, refusal: past(levels, 32, "nests more than 32 levels") }
  })

  const patterns = fc.tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 400 })).map(([inline, named]): VerdictShape => ({
    name: `patterns ${inline} + ${named}`,
    schema: {
      anyOf: [{ type: "number" }, ...count(inline).map((i) => ({ type: "string", pattern: `^(a|b)*${i}(c|d)+$` }))],
      patternProperties: Object.fromEntries(count(named).map((i) => [`^n${i}_[a-z]+$`, true]))
    },
    refusal: past(inline + named, 256, "more than 256 patterns") ?? past(2 + inline + named, 2_000, "more than 2,000 schema nodes")
  }))

  const enumShape = (kind: string, n: number, extra: Record<string, unknown>, refusal: string | undefined): VerdictShape => ({
    name: `enum of ${n} ${kind}`,
    schema: { allOf: [extra], enum: count(n).map((i) => (kind === "numbers" ? i : kind === "strings" ? `e${i}` : { e: [i] })) },
    refusal
  })

  // As long as the run's input estimate allows (64,000 tokens): some 200 KB of items, of each kind.
  const enums = fc.tuple(
    fc.constantFrom(["numbers", 30_000] as const, ["strings", 20_000] as const, ["objects", 12_000] as const),
    fc.nat(),
    flaw
  ).map(([[kind, most], seed, [extra, refusal]]) => enumShape(kind, seed % (most + 1), extra, refusal))

  const references = fc.tuple(fc.integer({ min: 1, max: 2_500 }), fc.boolean(), flaw).map(([n, broken, [extra, refusal]]): VerdictShape => ({
    name: `reference chain of ${n}${broken ? ", broken" : ""}`,
    schema: {
      allOf: [extra],
      $ref: "#/$defs/d0",
      $defs: Object.fromEntries(count(n).map((i) => [`d${i}`, { $ref: `#/$defs/d${broken && i === n - 1 ? "none" : (i + 1) % n}` }]))
    },
    refusal: past(2 + n, 2_000, "more than 2,000 schema nodes") ?? refusal ??
      (broken ? "does not resolve inside the schema" : undefined)
  }))

  const verdictShape = fc.oneof(wide, deep, patterns, enums, references)

  const charges = (organizationId: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.map(
        sql<{ state: unknown }>`SELECT json_build_object(
          'ledger', (SELECT count(*) FROM ledger_entries WHERE organization_id = ${organizationId}),
          'balance', (SELECT balance_micros FROM credit_accounts WHERE organization_id = ${organizationId}),
          'transactions', (SELECT count(*) FROM credit_transactions WHERE organization_id = ${organizationId}),
          'runs', (SELECT count(*) FROM runs WHERE organization_id = ${organizationId})
        )::text AS state`,
        ([row]) => JSON.parse(String(row!.state)) as Record<string, number>
      ))

  /** Sends one shape as a verdict run; why its answer is not the rule's, or undefined when it is. */
  const sendShape = (url: string, secret: string, statuses: Map<number, number>) => async (shape: VerdictShape) => {
    const response = await Effect.runPromise(rawRequest(url, {
      method: "POST",
      path: "/v1/runs",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", "idempotency-key": freshKey() },
      body: JSON.stringify({ kind: "verdict", state: "The parcel is late.", instructions: "Summarise", schema: shape.schema })
    }))
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
    const body = response.text.startsWith("{") ? JSON.parse(response.text) : undefined
    const [status, code] = shape.refusal === undefined ? [503, "no_route_available"] : [400, "invalid_verdict_schema"]
    const ok = response.status === status && body?.error?.code === code &&
      (shape.refusal === undefined || String(body.error.message).includes(shape.refusal))
    return ok ? undefined : `${shape.name}: expected ${status} ${code}, got ${response.status} ${response.text.slice(0, 200)}`
  }

  const holds = (send: (shape: VerdictShape) => Promise<string | undefined>, failures: Array<string>) => async (shape: VerdictShape) => {
    const problem = await send(shape)
    if (problem !== undefined) failures.push(problem)
    return problem === undefined
  }

  layer(ProbedServiceLive, { excludeTestServices: true, timeout: "300 seconds" })("fuzz", (it) => {
    // The refusals are probed: each is the check's whole work (the flawed shapes within the bounds go through every
    // step). The valid shapes are not: each 503 stores its pending run, and under the embedded database those writes
    // run on the service's own event loop, which is the database's cost, not the check's.
    it.effect("wide, deep, many-pattern, huge-enum and reference-chain schemas answer 400 or 503 by the rule, quickly", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 10_000_000)
        const before = yield* charges(organization.organizationId)
        const address = yield* ServerAddress
        const failures: Array<string> = []
        const statuses = new Map<number, number>()
        const send = holds(sendShape(address.url, organization.secret, statuses), failures)
        const run = (shapes: fc.Arbitrary<VerdictShape>, numRuns: number) =>
          Effect.promise(() =>
            fc.assert(fc.asyncProperty(shapes, send), { numRuns, seed: 20261128, endOnFailure: true })
              .catch((error: unknown) => failures.push(String(error).slice(0, 500)))
          )
        const { added, probes, queued, slowest } = yield* probeHealth(
          run(verdictShape.filter((shape) => shape.refusal !== undefined), VerdictRefusals)
        )
        yield* run(verdictShape.filter((shape) => shape.refusal === undefined), VerdictValid)
        console.log(
          `fuzz verdict schemas: statuses ${JSON.stringify(Object.fromEntries(statuses))}; /healthz over ${probes} probes ` +
            `during the refusals: slowest ${slowest.toFixed(1)} ms, the service's longest wait for a core ` +
            `${queued.toFixed(1)} ms, at most ${added.toFixed(1)} ms of the service's own work while one was out`
        )
        assert.deepStrictEqual(failures, [])
        assert.deepStrictEqual(Object.fromEntries(statuses), { 400: VerdictRefusals, 503: VerdictValid })
        const after = yield* charges(organization.organizationId)
        assert.deepStrictEqual(after, { ...before, runs: before.runs! + VerdictValid }, "only the 503s' pending runs stored; nothing charged")
        assert.isAbove(probes, 10)
        assert.isBelow(added, 50, "/healthz answered within 50 ms of the service's own work throughout")
      }).pipe(Effect.scoped))
  })
})
