/**
 * Handlers of the usage group. The query has passed the boundary (unknown, repeated and non-whole-number parameters
 * are the plain-text 400); here the window rules, then each route's own parameters, are checked in that order, each
 * failing `400 invalid_parameter`: the rollup's `group_by`; the ledger's `limit`, `key_id`, then `offset` or
 * `cursor`; the export's `format`, then `key_id`; the daily window's length (at most 92 days). The default window and
 * the quota period follow the clock. The export streams its CSV a page at a time; should the database fail after the
 * first page has been sent, the connection is dropped, so a client never takes a cut file for a whole one.
 */
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Clock, Effect, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../schema/Api.js"
import { Actor } from "../../schema/Auth.js"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import { CsvContentType, ledgerCsvHeader, ledgerCsvRecords, parseExportFormat } from "./LedgerCsv.js"
import { parseLedgerLimit } from "./LedgerLimit.js"
import { parseKeyFilter, parseLedgerQuery } from "./LedgerPaging.js"
import { Usage } from "./Usage.js"
import { parseGroupBy } from "./UsageGroups.js"
import type { LedgerRow } from "./UsageRepo.js"
import { dailyView, groupedRollupView, ledgerView, quotaView, rollupView, runUsageView } from "./UsageView.js"
import { checkDailyWindow, parseWindow, type WindowParams } from "./Window.js"

const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

const windowOf = (params: WindowParams) => Effect.flatMap(now, (date) => Effect.fromResult(parseWindow(params, date)))

const encoder = new TextEncoder()

/** The CSV response: the header, then one chunk per page; `abort` drops the connection if a later page fails. */
const csvResponse = (pages: Stream.Stream<ReadonlyArray<LedgerRow>, DatabaseUnavailable>, abort: () => void) =>
  HttpServerResponse.stream(
    Stream.concat(Stream.make(ledgerCsvHeader), Stream.map(pages, ledgerCsvRecords)).pipe(
      Stream.map((text) => encoder.encode(text)),
      Stream.tapCause(() => Effect.sync(abort))
    ),
    {
      contentType: CsvContentType,
      headers: { "cache-control": "no-store", "content-disposition": "attachment; filename=\"ledger.csv\"" }
    }
  )

/** The usage group's handlers. */
export const UsageHttp = HttpApiBuilder.group(Api, "usage", (handlers) =>
  Effect.gen(function*() {
    const usage = yield* Usage
    return handlers
      .handle("rollup", ({ query }) =>
        Effect.gen(function*() {
          const actor = yield* Actor
          const window = yield* windowOf(query)
          const by = yield* Effect.fromResult(parseGroupBy(query.group_by))
          return by === null
            ? rollupView(actor.organizationId, window, yield* usage.rollup(actor.organizationId, window))
            : groupedRollupView(actor.organizationId, window, by, yield* usage.grouped(actor.organizationId, window, by))
        }))
      .handle("ledger", ({ query }) =>
        Effect.gen(function*() {
          const actor = yield* Actor
          const window = yield* windowOf(query)
          const limit = yield* Effect.fromResult(parseLedgerLimit(query.limit))
          const page = yield* Effect.fromResult(parseLedgerQuery(actor.organizationId, query))
          return ledgerView(actor.organizationId, window, limit, yield* usage.ledger(actor.organizationId, window, limit, page))
        }))
      .handle("export", ({ query, request }) =>
        Effect.gen(function*() {
          const actor = yield* Actor
          const window = yield* windowOf(query)
          yield* Effect.fromResult(parseExportFormat(query.format))
          const keyId = yield* Effect.fromResult(parseKeyFilter(query.key_id))
          const pages = yield* usage.exportLedger(actor.organizationId, window, keyId)
          return csvResponse(pages, () => NodeHttpServerRequest.toServerResponse(request).destroy())
        }))
      .handle("daily", ({ query }) =>
        Effect.gen(function*() {
          const actor = yield* Actor
          const window = yield* Effect.flatMap(windowOf(query), (asked) => Effect.fromResult(checkDailyWindow(asked)))
          return dailyView(actor.organizationId, window, yield* usage.daily(actor.organizationId, window))
        }))
      .handle("run", ({ params }) =>
        Effect.gen(function*() {
          const actor = yield* Actor
          return runUsageView(actor.organizationId, yield* usage.run(actor.organizationId, params.run_id))
        }))
      .handle("quota", () =>
        Effect.gen(function*() {
          const actor = yield* Actor
          return quotaView(actor.organizationId, yield* usage.quota(actor.organizationId, yield* now))
        }))
  }))
