/**
 * `GET /v1/usage?group_by=key|model` over runs written straight into the tables: every figure of the groups sums to
 * the rollup of the same window (asked without group_by), a run calling two models counts once (under the model of
 * its last call), groups come largest settled spend first, and a bad `group_by` is `400 invalid_parameter`.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { call, codeOf } from "../support/Api.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"
import { getJson, windowQuery } from "../support/Usage.js"
import { insertRun, SeedHoldMicros, type SeedRun } from "./LedgerSeed.js"

const start = new Date(Math.floor(Date.now() / 1000) * 1000 - 86_400_000)
const end = new Date(start.getTime() + 2 * 86_400_000)
const inside = (minutes: number) => new Date(start.getTime() + 3_600_000 + minutes * 60_000)
const window = windowQuery(start, end)

const KeyA = `key_${"a".repeat(32)}`
const KeyB = `key_${"b".repeat(32)}`
const KeyC = `key_${"c".repeat(32)}`

const figures = ["runs.total", "runs.completed", "runs.failed", "runs.in_flight", "tokens.input_tokens",
  "tokens.output_tokens", "tokens.total_tokens", "spend.reserved_micros", "spend.settled_micros",
  "spend.unsettled_micros"] as const

const figure = (body: any, path: string): number => path.split(".").reduce((node, part) => node[part], body)

/** Each figure summed over the groups equals the rollup's, in the grouped response and in the plain rollup. */
const assertGroupsAddUp = (plain: any, grouped: any, what: string) => {
  for (const path of figures) {
    const summed = grouped.groups.reduce((total: number, group: any) => total + figure(group, path), 0)
    assert.strictEqual(summed, figure(plain, path), `${what}: ${path} of the groups against the rollup`)
    assert.strictEqual(figure(grouped, path), figure(plain, path), `${what}: ${path} of the grouped response`)
  }
  const settled = grouped.groups.map((group: any) => group.spend.settled_micros)
  assert.deepStrictEqual(settled, [...settled].sort((a: number, b: number) => b - a), `${what}: largest settled spend first`)
}

const group = (id: Record<string, string | null>, runs: [number, number, number, number], tokens: [number, number], spend: [number, number, number]) => ({
  ...id,
  runs: { total: runs[0], completed: runs[1], failed: runs[2], in_flight: runs[3] },
  tokens: { input_tokens: tokens[0], output_tokens: tokens[1], total_tokens: tokens[0] + tokens[1] },
  spend: { reserved_micros: spend[0], settled_micros: spend[1], unsettled_micros: spend[2] }
})

/** Runs of three keys and a console session, on two models, in every state. */
const SeededRuns: ReadonlyArray<SeedRun> = [
  { key: KeyA, state: "completed", at: inside(1), calls: [{ model: "m1", input: 0, output: 0, cost: 0, status: "failed" }, { model: "m1", input: 100, output: 1, cost: 50 }] },
  { key: KeyA, state: "completed", at: inside(2), calls: [{ model: "m1", input: 60, output: 1, cost: 30 }, { model: "m2", input: 140, output: 2, cost: 70 }] },
  { key: KeyB, state: "failed", at: inside(3), calls: [{ model: "m2", input: 40, output: 0, cost: 20 }] },
  { key: KeyB, state: "pending", held: true, at: inside(4), calls: [{ model: "m2", input: 10, output: 1, cost: 5 }] },
  { key: null, state: "completed", at: inside(5), calls: [{ model: "m1", input: 20, output: 1, cost: 10 }] },
  { key: KeyC, state: "pending", held: true, at: inside(6), calls: [] }
]

const runArbitrary: fc.Arbitrary<SeedRun> = fc.record({
  key: fc.constantFrom(KeyA, KeyB, null),
  state: fc.constantFrom("pending", "completed", "failed"),
  held: fc.boolean(),
  at: fc.integer({ min: 0, max: 2_000 }).map(inside),
  calls: fc.array(
    fc.record({
      model: fc.constantFrom("m1", "m2", "m3"),
      input: fc.nat(5_000),
      output: fc.nat(50),
      cost: fc.nat(300),
      status: fc.constantFrom("succeeded", "failed")
    }),
    { maxLength: 3 }
  )
})

layer(TestServerLive(), { excludeTestServices: true, timeout: "180 seconds" })("usage by key and by model", (it) => {
  describe("GET /v1/usage?group_by=key|model > 200", () => {
    it.effect("the groups of runs of three keys and a console session, on two models, add up to the rollup", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        const other = yield* seedOrganization()
        for (const run of SeededRuns) yield* insertRun(organizationId, run)
        yield* insertRun(organizationId, { ...SeededRuns[0]!, at: new Date(start.getTime() - 1_000) })
        yield* insertRun(other.organizationId, SeededRuns[0]!)

        const plain = yield* getJson(`/v1/usage?${window}`, secret)
        assert.isUndefined(plain.groups, "no groups without group_by")
        const byKey = yield* getJson(`/v1/usage?${window}&group_by=key`, secret)
        assert.deepStrictEqual({ ...byKey, groups: undefined }, { ...plain, groups: undefined })
        assert.deepStrictEqual(byKey.groups, [
          group({ key_id: KeyA }, [2, 2, 0, 0], [300, 4], [0, 150, 0]),
          group({ key_id: KeyB }, [2, 0, 1, 1], [40, 0], [SeedHoldMicros, 20, 5]),
          group({ key_id: null }, [1, 1, 0, 0], [20, 1], [0, 10, 0]),
          group({ key_id: KeyC }, [1, 0, 0, 1], [0, 0], [SeedHoldMicros, 0, 0])
        ])
        assertGroupsAddUp(plain, byKey, "by key")

        const byModel = yield* getJson(`/v1/usage?${window}&group_by=model`, secret)
        assert.deepStrictEqual(byModel.groups, [
          group({ model_id: "m1" }, [2, 2, 0, 0], [180, 3], [0, 90, 0]),
          group({ model_id: "m2" }, [3, 1, 1, 1], [180, 2], [SeedHoldMicros, 90, 5]),
          group({ model_id: null }, [1, 0, 0, 1], [0, 0], [SeedHoldMicros, 0, 0])
        ], "the run calling m1 then m2 counts once, under m2; its m1 call's tokens and cost stay m1's")
        assertGroupsAddUp(plain, byModel, "by model")
      }))

    it.effect("for any runs (keys, states, holds, calls on three models), the groups add up to the rollup", () =>
      Effect.gen(function*() {
        const samples = fc.sample(fc.array(runArbitrary, { maxLength: 8 }), { numRuns: 12, seed: 14 })
        for (const [index, runs] of samples.entries()) {
          const { organizationId, secret } = yield* seedOrganization()
          for (const run of runs) yield* insertRun(organizationId, run)
          const plain = yield* getJson(`/v1/usage?${window}`, secret)
          assert.strictEqual(plain.runs.total, runs.length)
          for (const by of ["key", "model"] as const) {
            assertGroupsAddUp(plain, yield* getJson(`/v1/usage?${window}&group_by=${by}`, secret), `sample ${index} by ${by}`)
          }
        }
      }))

    it.effect("a window without runs has no groups and zero totals", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        for (const by of ["key", "model"]) {
          const body = yield* getJson(`/v1/usage?${window}&group_by=${by}`, secret)
          assert.deepStrictEqual(body.groups, [])
          assert.deepStrictEqual(body.runs, { total: 0, completed: 0, failed: 0, in_flight: 0 })
        }
      }))
  })

  describe("GET /v1/usage?group_by= > 400", () => {
    it.effect("anything but key or model is invalid_parameter, after the window rules; a repeated one is malformed", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        for (const value of ["team", "", "KEY", "key,model", "models"]) {
          const response = yield* call("GET", `/v1/usage?group_by=${encodeURIComponent(value)}`, { secret })
          assert.strictEqual(response.status, 400, `${value}: ${response.text}`)
          assert.strictEqual(codeOf(response), "invalid_parameter", value)
          assert.include(response.json().error.message, "group_by must be key or model", value)
        }
        const windowFirst = yield* call("GET", "/v1/usage?start_at=2026-01-01T00:00:00Z&group_by=team", { secret })
        assert.strictEqual(codeOf(windowFirst), "invalid_parameter")
        assert.include(windowFirst.json().error.message, "start_at and end_at must be sent together")
        const repeated = yield* call("GET", "/v1/usage?group_by=key&group_by=model", { secret })
        assert.strictEqual(repeated.status, 400)
        assert.isTrue(repeated.text.startsWith("Failed to deserialize query string: "), repeated.text)
      }))
  })
})
