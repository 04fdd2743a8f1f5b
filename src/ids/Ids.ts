/**
 * Minting of identifiers. Run and key ids are UUIDv7 (time-ordered, so "newest first" is an index scan), written as
 * 32 lowercase hex after their prefix; organization, user and transaction ids are 128 random bits.
 */
import { randomBytes, randomFillSync } from "node:crypto"

/**
 * Random bytes drawn from the system's generator 4 KiB at a time (one call per 256 ids instead of one per id: each
 * call crosses into C++ and the kernel), as Node's own `randomUUID` does. Each id gets 16 fresh bytes of it.
 */
const pool = Buffer.alloc(4096)
let poolOffset = pool.length

const random16 = (): Buffer => {
  if (poolOffset + 16 > pool.length) {
    randomFillSync(pool)
    poolOffset = 0
  }
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + 16))
  poolOffset += 16
  return bytes
}

/** A UUIDv7 as 32 lowercase hex digits. */
export const uuidv7Hex = (now: number = Date.now()): string => {
  const bytes = random16()
  bytes.writeUIntBE(now, 0, 6)
  bytes[6] = (bytes[6]! & 0x0f) | 0x70
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  return bytes.toString("hex")
}

/** `key_` + 32 hex. */
export const newKeyId = (): string => `key_${uuidv7Hex()}`

/** `org_` + 32 hex. */
export const newOrganizationId = (): string => `org_${randomBytes(16).toString("hex")}`

/** `user_` + 32 hex, for owners created without an id. */
export const newUserId = (): string => `user_${randomBytes(16).toString("hex")}`

/** A billing transaction id: `txn_` + 32 hex (a day's usage row is `txn_usage_YYYYMMDD`, see CreditStore). */
export const newTransactionId = (): string => `txn_${randomBytes(16).toString("hex")}`

/** The hyphenated uuid of 32 hex digits. */
export const uuidFromHex = (hex: string): string =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
