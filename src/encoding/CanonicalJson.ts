/**
 * RFC 8785 (JSON Canonicalization Scheme) serialization and SHA-256 digests.
 * Keys are sorted by UTF-16 code units (JavaScript's default string order), numbers use ECMAScript's
 * `Number.prototype.toString` (what `JSON.stringify` prints), strings use JSON.stringify's escaping (the RFC's:
 * `\b \t \n \f \r`, other controls as lowercase `\u00xx`, `"` and `\\`, everything else literal), no whitespace.
 * Outside the RFC's I-JSON input: lone surrogates are written escaped (`\udxxx`, as JSON.stringify does) rather than
 * refused, and object members whose value is `undefined` are left out; non-finite numbers and non-JSON values
 * (functions, symbols, bigints) are programming errors and throw a `TypeError`.
 */
import { sha256Hex } from "./Sha256.js"

// The text grows by string concatenation (V8 keeps it as a rope until it is read, and flattens it once), with plain
// loops: a run's ~1.3 KB input was allocating some 13 KB through an array of pieces and the closures of `forEach`.
const serialize = (value: unknown): string => {
  if (value === null) return "null"
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false"
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot hold the number ${value}`)
      return JSON.stringify(value)
    case "string":
      return JSON.stringify(value)
    case "object": {
      if (Array.isArray(value)) {
        let text = "["
        for (let index = 0; index < value.length; index++) {
          const item: unknown = value[index]
          text += (index > 0 ? "," : "") + serialize(item === undefined ? null : item)
        }
        return text + "]"
      }
      const record = value as Record<string, unknown>
      const keys = Object.keys(record).sort()
      let text = "{"
      let first = true
      for (const key of keys) {
        const member = record[key]
        if (member === undefined) continue
        text += (first ? "" : ",") + JSON.stringify(key) + ":" + serialize(member)
        first = false
      }
      return text + "}"
    }
    default:
      throw new TypeError(`canonical JSON cannot hold a value of type ${typeof value}`)
  }
}

/** The RFC 8785 canonical JSON text of a JSON value. */
export const canonicalJson = (value: unknown): string => serialize(value)

export { sha256Hex }

/** The SHA-256 hex digest of a JSON value's canonical JSON (how `input_digest` and `output_digest` are made). */
export const canonicalDigest = (value: unknown): string => sha256Hex(canonicalJson(value))
