/** Billing transaction ids: `txn_` + 32 hex (a day's usage row is `txn_usage_YYYYMMDD`, see CreditStore). */
import { randomBytes } from "node:crypto"

/** A new transaction id. */
export const newTransactionId = (): string => `txn_${randomBytes(16).toString("hex")}`
