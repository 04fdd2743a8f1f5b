/**
 * SHA-256 of a string's UTF-8 bytes by Node's one-shot `crypto.hash`: for a run's input (about 1.3 KB of canonical
 * JSON) it costs a third of a `createHash` object, and a run digests its input and its API key's secret on every
 * request.
 */
import { hash } from "node:crypto"

/** The SHA-256 of a string's UTF-8 bytes as 64 lowercase hex characters. */
export const sha256Hex = (text: string): string => hash("sha256", text, "hex")

/** The SHA-256 of a string's UTF-8 bytes. */
export const sha256Bytes = (text: string): Buffer => hash("sha256", text, "buffer")
