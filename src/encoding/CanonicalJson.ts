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

const serialize = (value: unknown, out: Array<string>): void => {
  if (value === null) {
    out.push("null")
    return
  }
  switch (typeof value) {
    case "boolean":
      out.push(value ? "true" : "false")
      return
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot hold the number ${value}`)
      out.push(JSON.stringify(value))
      return
    case "string":
      out.push(JSON.stringify(value))
      return
    case "object": {
      if (Array.isArray(value)) {
        out.push("[")
        value.forEach((item, index) => {
          if (index > 0) out.push(",")
          serialize(item === undefined ? null : item, out)
        })
        out.push("]")
        return
      }
      const record = value as Record<string, unknown>
      const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort()
      out.push("{")
      keys.forEach((key, index) => {
        if (index > 0) out.push(",")
        out.push(JSON.stringify(key), ":")
        serialize(record[key], out)
      })
      out.push("}")
      return
    }
    default:
      throw new TypeError(`canonical JSON cannot hold a value of type ${typeof value}`)
  }
}

/** The RFC 8785 canonical JSON text of a JSON value. */
export const canonicalJson = (value: unknown): string => {
  const out: Array<string> = []
  serialize(value, out)
  return out.join("")
}

export { sha256Hex }

/** The SHA-256 hex digest of a JSON value's canonical JSON (how `input_digest` and `output_digest` are made). */
export const canonicalDigest = (value: unknown): string => sha256Hex(canonicalJson(value))
