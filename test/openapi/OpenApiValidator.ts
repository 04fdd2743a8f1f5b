/**
 * The committed OpenAPI document (`schema/openapi.json`) as a test reads it: its operations, and a validator of
 * values against any schema in it (JSON Schema 2020-12, the dialect of OpenAPI 3.1, by Ajv), so an example or a live
 * answer is checked against exactly what client authors and generators read.
 */
import Ajv2020 from "ajv/dist/2020.js"
import { readFileSync } from "node:fs"

/** The committed document. */
export const committedDocument: Record<string, any> = JSON.parse(
  readFileSync(new URL("../../schema/openapi.json", import.meta.url), "utf8")
)

/** One operation of the document. */
export interface DocumentedOperation {
  readonly path: string
  readonly method: string
  readonly operation: Record<string, any>
}

/** Every operation, in the document's order. */
export const operationsOf = (document: Record<string, any>): ReadonlyArray<DocumentedOperation> =>
  Object.entries<Record<string, any>>(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({ path, method, operation }))
  )

const DocumentId = "https://arbiter.invalid/openapi.json"

const pointer = (parts: ReadonlyArray<string | number>) =>
  parts.map((part) => String(part).replace(/~/g, "~0").replace(/\//g, "~1")).join("/")

/** Validates values against the schema found at a location of the document (given as its path segments). */
export const makeValidator = (document: Record<string, any>) => {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true })
  ajv.addSchema({ ...document, $id: DocumentId })
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>()
  return (location: ReadonlyArray<string | number>, value: unknown): ReadonlyArray<string> => {
    const ref = `${DocumentId}#/${pointer(location)}`
    let validate = compiled.get(ref)
    if (validate === undefined) {
      validate = ajv.compile({ $ref: ref })
      compiled.set(ref, validate)
    }
    if (validate(value)) return []
    return (validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message}`)
  }
}

/** The component a `$ref` names (`#/components/headers/RequestId`), or the object itself when it is no reference. */
export const resolve = (document: Record<string, any>, value: Record<string, any>): Record<string, any> => {
  if (typeof value.$ref !== "string") return value
  return value.$ref.slice(2).split("/").reduce((node: any, part: string) => node?.[part], document)
}
