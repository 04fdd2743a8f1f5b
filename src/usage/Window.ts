/**
 * The usage routes' time window (spec, "Usage and quota": window rules): `start_at` and `end_at` both or neither
 * (default: the current UTC calendar month), each exactly `YYYY-MM-DDTHH:MM:SSZ` with a real Gregorian date (years
 * 0001 to 9999, no leap seconds), half-open `[start, end)` with `start` before `end`. The daily series takes a
 * window at most 92 days long (92 x 86,400 seconds) and lists every UTC day it touches: 92 rows for a window aligned
 * on midnight, 93 for one that is not. Each broken rule is `400 invalid_parameter` naming it.
 */
import { Result, Option } from "effect"
import { InvalidParameter } from "../../schema/Errors.js"

/** A half-open UTC interval `[start, end)`. */
export interface Window {
  readonly start: Date
  readonly end: Date
}

/** The window parameters of a usage query, as sent. */
export interface WindowParams {
  readonly start_at?: string | undefined
  readonly end_at?: string | undefined
}

/** Longest daily-series window, in days of 86,400 seconds (spec, Limits: "at most 92 days"). */
export const MAX_DAILY_DAYS = 92

const DayMs = 86_400_000

/** Longest daily-series window in milliseconds: exactly 92 x 24 hours. */
export const MAX_DAILY_WINDOW_MS = MAX_DAILY_DAYS * DayMs

const TimestampPattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/

const utc = (year: number, month: number, day: number, hours = 0, minutes = 0, seconds = 0): Date => {
  const date = new Date(0)
  // setUTCFullYear, unlike Date.UTC, does not move years 0-99 into the 1900s.
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hours, minutes, seconds, 0)
  return date
}

/** The instant a contract timestamp names, or none when it is not exactly `YYYY-MM-DDTHH:MM:SSZ` on a real date. */
export const parseTimestamp = (text: string): Option.Option<Date> => {
  const match = TimestampPattern.exec(text)
  if (match === null) return Option.none()
  const [year, month, day, hours, minutes, seconds] = match.slice(1).map(Number) as [number, number, number, number, number, number]
  if (year < 1 || hours > 23 || minutes > 59 || seconds > 59) return Option.none()
  const date = utc(year, month, day, hours, minutes, seconds)
  // A day or month out of range rolls over (February 30 becomes March 2), so a real date reads back unchanged.
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
    ? Option.some(date)
    : Option.none()
}

/** The UTC calendar month holding an instant: `[first day 00:00:00Z, first day of the next month)`. */
export const monthOf = (now: Date): Window => ({
  start: utc(now.getUTCFullYear(), now.getUTCMonth() + 1, 1),
  end: utc(now.getUTCFullYear(), now.getUTCMonth() + 2, 1)
})

const invalid = (message: string) => Result.fail(new InvalidParameter({ message }))

const FormatRule = "must be a UTC timestamp exactly like 2026-09-01T00:00:00Z (a real calendar date, no fractions, " +
  "no offsets)"

/** The window of a usage query, or the first window rule it breaks; `now` gives the default month. */
export const parseWindow = (params: WindowParams, now: Date): Result.Result<Window, InvalidParameter> => {
  if (params.start_at === undefined && params.end_at === undefined) return Result.succeed(monthOf(now))
  if (params.start_at === undefined || params.end_at === undefined) {
    return invalid("start_at and end_at must be sent together (or neither, for the current UTC month)")
  }
  const start = parseTimestamp(params.start_at)
  if (Option.isNone(start)) return invalid(`start_at ${FormatRule}`)
  const end = parseTimestamp(params.end_at)
  if (Option.isNone(end)) return invalid(`end_at ${FormatRule}`)
  if (start.value.getTime() >= end.value.getTime()) return invalid("start_at must be before end_at")
  return Result.succeed({ start: start.value, end: end.value })
}

const startOfDay = (date: Date): number => Math.floor(date.getTime() / DayMs) * DayMs

/** The number of UTC days a window touches (a window from 10:00 to 10:00 the next day touches two). */
export const dayCount = (window: Window): number =>
  Math.ceil((window.end.getTime() - startOfDay(window.start)) / DayMs)

/** The UTC dates (`YYYY-MM-DD`) a window touches, oldest first. */
export const utcDays = (window: Window): ReadonlyArray<string> =>
  Array.from({ length: dayCount(window) }, (_, index) =>
    new Date(startOfDay(window.start) + index * DayMs).toISOString().slice(0, 10))

const twoDigits = (value: number) => String(value).padStart(2, "0")

/** A window's length as days and `HH:MM:SS`, e.g. `92 days 00:00:01`. */
const describeLength = (ms: number): string => {
  const seconds = Math.floor(ms / 1000)
  const days = Math.floor(seconds / 86_400)
  const rest = seconds % 86_400
  const clock = `${twoDigits(Math.floor(rest / 3_600))}:${twoDigits(Math.floor(rest / 60) % 60)}:${twoDigits(rest % 60)}`
  return `${days} ${days === 1 ? "day" : "days"} ${clock}`
}

/**
 * A window the daily series accepts: one at most 92 days long (92 x 86,400 seconds), wherever it starts. Its series
 * has one row per UTC day it touches, so up to 93 when it does not start at midnight.
 */
export const checkDailyWindow = (window: Window): Result.Result<Window, InvalidParameter> => {
  const length = window.end.getTime() - window.start.getTime()
  return length > MAX_DAILY_WINDOW_MS
    ? invalid(
      `the daily window is ${describeLength(length)} long; at most ${MAX_DAILY_DAYS} days ` +
        `(${MAX_DAILY_DAYS} x 24 hours) are allowed`
    )
    : Result.succeed(window)
}
