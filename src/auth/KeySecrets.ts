/**
 * API key secrets (spec, "API key"): `otsk_` + 64 lowercase hex from a CSPRNG, shown once. Only the SHA-256 of a
 * secret is stored (and compared); `otsk_` + its first 8 hex is kept for display.
 */
import { randomBytes } from "node:crypto"
import { sha256Bytes } from "../encoding/Sha256.js"

const SecretPattern = /^otsk_[0-9a-f]{64}$/

/** A new secret. */
export const newSecret = (): string => `otsk_${randomBytes(32).toString("hex")}`

/** True for a well-formed secret. */
export const isWellFormedSecret = (value: string): boolean => SecretPattern.test(value)

/** The SHA-256 of a secret, as stored. */
export const secretHash = (secret: string): Buffer => sha256Bytes(secret)

/** The display prefix of a secret. */
export const secretPrefix = (secret: string): string => secret.slice(0, 13)
