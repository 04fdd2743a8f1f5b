/**
 * `Server-Timing` on `POST /v1/runs` (spec, Limits): `admit`, `upstream`, `gateway` (the rest of the service's own
 * time) and `total`, in milliseconds, on 200, 202 and refusals alike (a pre-response handler runs on every answer);
 * `settle` (part of `gateway`) is added once a run has settled. The same handler counts the run answer in the
 * metrics (RunMetrics.ts), as it sees the final status and the marks.
 */
import { HttpEffect, HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { countRunAnswer } from "./RunMetrics.js"

/** Marks filled while a request runs. */
export interface TimingMarks {
  readonly started: number
  readonly startedPrecise: number
  admitMs?: number
  upstreamMs?: number
  settleMs?: number
}

const ms = (value: number) => value.toFixed(3)

/** The header value for marks, measured now. */
export const serverTimingValue = (marks: TimingMarks): string => {
  const total = performance.now() - marks.startedPrecise
  const admit = marks.admitMs ?? 0
  const upstream = marks.upstreamMs ?? 0
  const gateway = Math.max(0, total - admit - upstream)
  const settle = marks.settleMs === undefined ? "" : `, settle;dur=${ms(marks.settleMs)}`
  return `admit;dur=${ms(admit)}, upstream;dur=${ms(upstream)}, gateway;dur=${ms(gateway)}, total;dur=${ms(total)}${settle}`
}

/** Marks of a request whose timing starts now. */
export const newTimingMarks = (): TimingMarks => ({ started: Date.now(), startedPrecise: performance.now() })

/**
 * Adds the header of `marks` to whatever response the current request ends with, and counts the run answer (on the
 * request the fiber serves: outside a request it does nothing).
 */
export const timeAnswer = (marks: TimingMarks): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, (request, response) =>
      Effect.sync(() => {
        countRunAnswer(request, response, marks)
        return HttpServerResponse.setHeader(response, "server-timing", serverTimingValue(marks))
      }))
    return Effect.void
  })

/** Starts timing the current request; the header is added to whatever response it ends with. */
export const startServerTiming = Effect.suspend(() => {
  const marks = newTimingMarks()
  return Effect.as(timeAnswer(marks), marks)
})
