/**
 * The ledger as CSV (`GET /v1/usage/export?format=csv`; RFC 4180): a header row, then one record per ledger entry
 * with the JSON entry's fields in its order, `tokens` spread into its three counts. Records end with CRLF; a field
 * holding a comma, a double quote, CR or LF is quoted, its quotes doubled; null (`provider_request_id`, `key_id`) is
 * an empty field. Values are written as stored: no spreadsheet formula escaping, so the file parses back to the
 * ledger exactly.
 */
import { Result } from "effect"
import { InvalidParameter } from "../../schema/Errors.js"
import { formatTimestamp } from "../../schema/Ids.js"
import { hyphenatedRunId } from "../runs/RunView.js"
import type { LedgerRow } from "./UsageRepo.js"

/** The export formats (only CSV). */
export type ExportFormat = "csv"

/** The column names, in order. */
export const LedgerCsvColumns = [
  "run_id",
  "retry_ordinal",
  "provider",
  "model_id",
  "provider_request_id",
  "status",
  "input_tokens",
  "output_tokens",
  "total_tokens",
  "cost_micros",
  "created_at",
  "key_id"
] as const

/** The `Content-Type` of the export. */
export const CsvContentType = "text/csv; charset=utf-8"

/** The `format` of an export query: `csv` when absent; anything else is `invalid_parameter`. */
export const parseExportFormat = (format: string | undefined): Result.Result<ExportFormat, InvalidParameter> =>
  format === undefined || format === "csv"
    ? Result.succeed("csv")
    : Result.fail(new InvalidParameter({ message: "format must be csv" }))

const NeedsQuotes = /[",\r\n]/

/** One CSV field (RFC 4180, section 2): quoted, quotes doubled, when it holds a comma, a quote, CR or LF. */
export const csvField = (value: string | number | null): string => {
  if (value === null) return ""
  const text = String(value)
  return NeedsQuotes.test(text) ? `"${text.replace(/"/g, "\"\"")}"` : text
}

/** One CSV record, ended by CRLF. */
const csvRecord = (fields: ReadonlyArray<string | number | null>): string => `${fields.map(csvField).join(",")}\r\n`

/** The header row. */
export const ledgerCsvHeader: string = csvRecord(LedgerCsvColumns)

/** The records of ledger entries, in the order given. */
export const ledgerCsvRecords = (rows: ReadonlyArray<LedgerRow>): string =>
  rows.map((row) =>
    csvRecord([
      hyphenatedRunId(row.run_id),
      row.retry_ordinal,
      row.provider,
      row.model_id,
      row.provider_request_id,
      row.status,
      row.input_tokens,
      row.output_tokens,
      row.input_tokens + row.output_tokens,
      row.cost_micros,
      formatTimestamp(row.created_at),
      row.key_id
    ])
  ).join("")
