/** The usage window rules (src/usage/Window.ts) and the ledger limit (src/usage/LedgerLimit.ts), as pure functions. */
import { assert, describe, it } from "@effect/vitest"
import { Option, Result } from "effect"
import fc from "fast-check"
import { formatTimestamp } from "../../schema/Ids.js"
import { parseLedgerLimit } from "../../src/usage/LedgerLimit.js"
import { checkDailyWindow, dayCount, monthOf, parseTimestamp, parseWindow, utcDays } from "../../src/usage/Window.js"

const at = (text: string) => new Date(text)
const now = at("2026-09-17T08:30:00Z")

const refusal = <A>(result: Result.Result<A, { readonly _tag: string; readonly message: string }>) => {
  assert.isTrue(Result.isFailure(result), "expected a refusal")
  const error = Result.getFailure(result).pipe(Option.getOrThrow)
  assert.strictEqual(error._tag, "invalid_parameter")
  return error.message
}

/** Instants of years 0001-9999 at second precision. */
const instant = fc.integer({ min: Date.parse("0001-01-01T00:00:00Z") / 1000, max: Date.parse("9999-12-31T23:59:59Z") / 1000 })
  .map((seconds) => new Date(seconds * 1000))

describe("parseTimestamp", () => {
  it("accepts exactly YYYY-MM-DDTHH:MM:SSZ on real dates, leap days included", () => {
    for (const text of ["2026-09-01T00:00:00Z", "2024-02-29T23:59:59Z", "2000-02-29T12:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "0099-06-15T01:02:03Z"]) {
      const parsed = parseTimestamp(text)
      assert.isTrue(Option.isSome(parsed), text)
      assert.strictEqual(formatTimestamp(Option.getOrThrow(parsed)), text)
    }
  })

  it("refuses fractions, offsets, other layouts, impossible dates and times, year 0", () => {
    for (const text of [
      "2026-09-01T00:00:00.000Z", "2026-09-01T00:00:00+00:00", "2026-09-01T00:00:00", "2026-09-01 00:00:00Z",
      "2026-09-01", "2026-9-01T00:00:00Z", "2026-09-01t00:00:00z", " 2026-09-01T00:00:00Z", "", "1790000000",
      "2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-02-30T00:00:00Z", "2026-04-31T00:00:00Z",
      "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-09-00T00:00:00Z", "2026-09-01T24:00:00Z",
      "2026-09-01T00:60:00Z", "2026-12-31T23:59:60Z", "0000-01-01T00:00:00Z", "+02026-09-01T00:00:00Z"
    ]) {
      assert.isTrue(Option.isNone(parseTimestamp(text)), text)
    }
  })

  it("reads back every instant it formats", () =>
    fc.assert(fc.property(instant, (date) => {
      assert.strictEqual(Option.getOrThrow(parseTimestamp(formatTimestamp(date))).getTime(), date.getTime())
    })))

  it("refuses a day past its month's end", () =>
    fc.assert(fc.property(fc.integer({ min: 1, max: 9999 }), fc.integer({ min: 1, max: 12 }), (year, month) => {
      const last = new Date(Date.UTC(2000, month, 0))
      last.setUTCFullYear(year, month, 0)
      const day = last.getUTCDate() + 1
      const text = `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}T00:00:00Z`
      assert.isTrue(Option.isNone(parseTimestamp(text)), text)
    })))
})

describe("parseWindow", () => {
  it("defaults to the current UTC calendar month, December rolling into the next year", () => {
    assert.deepStrictEqual(Result.getOrThrow(parseWindow({}, now)), { start: at("2026-09-01T00:00:00Z"), end: at("2026-10-01T00:00:00Z") })
    assert.deepStrictEqual(monthOf(at("2026-12-31T23:59:59Z")), { start: at("2026-12-01T00:00:00Z"), end: at("2027-01-01T00:00:00Z") })
    assert.deepStrictEqual(monthOf(at("2028-02-29T00:00:00Z")), { start: at("2028-02-01T00:00:00Z"), end: at("2028-03-01T00:00:00Z") })
  })

  it("takes both bounds as sent", () => {
    assert.deepStrictEqual(
      Result.getOrThrow(parseWindow({ start_at: "2026-01-01T10:00:00Z", end_at: "2026-01-01T10:00:01Z" }, now)),
      { start: at("2026-01-01T10:00:00Z"), end: at("2026-01-01T10:00:01Z") }
    )
  })

  it("names the broken rule: one bound, the format of each bound, start not before end", () => {
    assert.include(refusal(parseWindow({ start_at: "2026-01-01T00:00:00Z" }, now)), "start_at and end_at must be sent together")
    assert.include(refusal(parseWindow({ end_at: "2026-01-01T00:00:00Z" }, now)), "start_at and end_at must be sent together")
    assert.match(refusal(parseWindow({ start_at: "2026-01-01", end_at: "2026-02-01T00:00:00Z" }, now)), /^start_at must be a UTC timestamp exactly like/)
    assert.match(refusal(parseWindow({ start_at: "2026-01-01T00:00:00Z", end_at: "2026-02-30T00:00:00Z" }, now)), /^end_at must be a UTC timestamp exactly like/)
    assert.strictEqual(refusal(parseWindow({ start_at: "2026-01-01T00:00:00Z", end_at: "2026-01-01T00:00:00Z" }, now)), "start_at must be before end_at")
    assert.strictEqual(refusal(parseWindow({ start_at: "2026-01-02T00:00:00Z", end_at: "2026-01-01T00:00:00Z" }, now)), "start_at must be before end_at")
  })
})

describe("the daily window", () => {
  it("touches every UTC day from the start's to the one before the (exclusive) end", () => {
    assert.deepStrictEqual(utcDays({ start: at("2026-02-27T00:00:00Z"), end: at("2026-03-02T00:00:00Z") }), ["2026-02-27", "2026-02-28", "2026-03-01"])
    assert.deepStrictEqual(utcDays({ start: at("2026-02-27T23:00:00Z"), end: at("2026-03-01T00:00:01Z") }), ["2026-02-27", "2026-02-28", "2026-03-01"])
    assert.deepStrictEqual(utcDays({ start: at("2026-02-27T10:00:00Z"), end: at("2026-02-27T10:00:01Z") }), ["2026-02-27"])
    assert.strictEqual(utcDays(monthOf(now)).length, 30)
  })

  it("allows any window of at most 92 x 24 hours, wherever it starts, and refuses a second more, naming its length", () => {
    const ninetyTwo = { start: at("2026-01-01T00:00:00Z"), end: at("2026-04-03T00:00:00Z") }
    assert.strictEqual(dayCount(ninetyTwo), 92)
    assert.isTrue(Result.isSuccess(checkDailyWindow(ninetyTwo)))
    const atNoon = { start: at("2026-01-01T12:00:00Z"), end: at("2026-04-03T12:00:00Z") }
    assert.isTrue(Result.isSuccess(checkDailyWindow(atNoon)), "exactly 92 days that start at noon")
    assert.strictEqual(utcDays(atNoon).length, 93, "one row per UTC day it touches")
    assert.strictEqual(utcDays(atNoon)[0], "2026-01-01")
    assert.strictEqual(utcDays(atNoon).at(-1), "2026-04-03")
    assert.isTrue(Result.isSuccess(checkDailyWindow({ start: at("2026-01-01T23:59:59Z"), end: at("2026-04-03T23:59:59Z") })))
    assert.strictEqual(
      refusal(checkDailyWindow({ start: ninetyTwo.start, end: at("2026-04-03T00:00:01Z") })),
      "the daily window is 92 days 00:00:01 long; at most 92 days (92 x 24 hours) are allowed"
    )
    assert.include(refusal(checkDailyWindow({ start: atNoon.start, end: at("2026-04-03T12:00:01Z") })), "92 days 00:00:01 long")
    assert.include(refusal(checkDailyWindow({ start: at("2020-01-01T00:00:00Z"), end: at("2026-01-01T00:00:00Z") })), "2192 days 00:00:00 long")
    assert.include(refusal(checkDailyWindow({ start: at("2026-01-01T00:00:00Z"), end: at("2026-04-04T13:14:15Z") })), "93 days 13:14:15 long")
  })

  it("lists consecutive dates, from the start's date to the date of the last second inside", () =>
    fc.assert(fc.property(instant, fc.integer({ min: 1, max: 200 * 86_400 }), (start, seconds) => {
      const window = { start, end: new Date(Math.min(start.getTime() + seconds * 1000, Date.parse("9999-12-31T23:59:59Z") + 1000)) }
      fc.pre(window.start < window.end)
      const days = utcDays(window)
      assert.strictEqual(days.length, dayCount(window))
      assert.strictEqual(days[0], start.toISOString().slice(0, 10))
      assert.strictEqual(days.at(-1), new Date(window.end.getTime() - 1000).toISOString().slice(0, 10))
      days.slice(1).forEach((day, index) => assert.strictEqual(Date.parse(day) - Date.parse(days[index]!), 86_400_000))
      assert.strictEqual(Result.isSuccess(checkDailyWindow(window)), window.end.getTime() - start.getTime() <= 92 * 86_400_000)
      if (Result.isSuccess(checkDailyWindow(window))) assert.isAtMost(days.length, 93)
    })))
})

describe("parseLedgerLimit", () => {
  it("defaults to 50, keeps 1-200, clamps above 200 however long the number", () => {
    assert.strictEqual(Result.getOrThrow(parseLedgerLimit(undefined)), 50)
    for (const [text, limit] of [["1", 1], ["007", 7], ["200", 200], ["201", 200], ["123456789012345678901234567890", 200]] as const) {
      assert.strictEqual(Result.getOrThrow(parseLedgerLimit(text)), limit, text)
    }
  })

  it("refuses 0 and negative limits with invalid_parameter", () => {
    for (const text of ["0", "-0", "000", "-1", "-123456789012345678901234567890"]) {
      assert.include(refusal(parseLedgerLimit(text)), "limit must be at least 1", text)
    }
  })

  it("any whole number n >= 1 gives min(n, 200)", () =>
    fc.assert(fc.property(fc.bigInt({ min: 1n, max: 10n ** 40n }), (n) => {
      assert.strictEqual(Result.getOrThrow(parseLedgerLimit(n.toString())), n > 200n ? 200 : Number(n))
    })))
})
