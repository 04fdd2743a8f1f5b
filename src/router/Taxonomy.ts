/**
 * The task taxonomy (`data/task-types.json`): families, one default task type per family, and task types with
 * their benchmark weights and expected answer tokens and turns. Loading checks it against the loaded catalog
 * (weights name catalog benchmarks and sum to 1) and against the classifier's limits (2 to 20 families, at most 20
 * task types per family, since each becomes one `choice` question).
 */
import { Data, Effect, Result, Schema } from "effect"
import type { Catalog } from "./Catalog.js"
import {
  ArrayOf,
  decodeDataFile,
  type ItemList,
  joinIssues,
  locateIssue,
  NonEmptyString,
  NonNegative,
  Positive,
  readJsonFile
} from "./DataFile.js"

/** The task-types file is missing, unreadable or invalid; a start-up error whose message locates the problem. */
export class TaxonomyInvalid extends Data.TaggedError("TaxonomyInvalid")<{ readonly message: string }> {}

/** One task type of the file. */
export const TaskTypeEntry = Schema.Struct({
  id: NonEmptyString,
  family: NonEmptyString,
  description: Schema.String,
  benchmark_weights: Schema.Record(Schema.String, NonNegative),
  expected_output_tokens: Positive,
  expected_turns: Positive,
  default_for_family: Schema.optional(Schema.Boolean)
}).annotate({ identifier: "a task type object" })

/** The whole task-types file. */
export const TaxonomyFile = Schema.Struct({
  as_of: Schema.String,
  families: ArrayOf(NonEmptyString, 2, 20),
  family_defaults: Schema.Record(Schema.String, Schema.String),
  task_types: ArrayOf(TaskTypeEntry, 1)
}).annotate({ identifier: "a task-types object" })

/** A decoded task-types file. */
export type TaxonomyFile = typeof TaxonomyFile.Type

/** A task type as ranking and classification read it. */
export interface TaskType {
  readonly id: string
  readonly family: string
  readonly description: string
  readonly benchmarkWeights: Readonly<Record<string, number>>
  readonly expectedOutputTokens: number
  readonly expectedTurns: number
}

/** The loaded taxonomy; families and task types keep the file's order. */
export interface Taxonomy {
  readonly file: TaxonomyFile
  readonly families: ReadonlyArray<string>
  readonly familyDefaults: ReadonlyMap<string, TaskType>
  readonly taskTypes: ReadonlyArray<TaskType>
  readonly taskTypesById: ReadonlyMap<string, TaskType>
  readonly taskTypesByFamily: ReadonlyMap<string, ReadonlyArray<TaskType>>
}

/** Most task types one family may hold: its task types are the options of one `choice` question. */
export const MAX_TASK_TYPES_PER_FAMILY = 20

/** How far a task type's weights may sum from 1 (the file rounds weights to two decimals). */
export const WEIGHT_SUM_TOLERANCE = 0.01

const TASK_TYPES: ItemList = { list: "task_types", noun: "task type" }

/** The semantic problems of a decoded taxonomy, checked against the loaded catalog. */
export const taxonomyIssues = (
  file: string,
  json: unknown,
  taxonomy: TaxonomyFile,
  catalog: Catalog
): ReadonlyArray<string> => {
  const issues: Array<string> = []
  const at = (path: ReadonlyArray<PropertyKey>, message: string) =>
    issues.push(locateIssue(file, json, TASK_TYPES, path, message))
  const families = new Set<string>()
  taxonomy.families.forEach((family, index) => {
    if (families.has(family)) at(["families", index], `duplicate family "${family}"`)
    families.add(family)
  })
  const ids = new Map<string, string>()
  taxonomy.task_types.forEach((type, index) => {
    if (ids.has(type.id)) at(["task_types", index, "id"], "duplicate task type id")
    ids.set(type.id, type.family)
    if (!families.has(type.family)) at(["task_types", index, "family"], `unknown family "${type.family}"`)
    let sum = 0
    for (const [benchmark, weight] of Object.entries(type.benchmark_weights)) {
      sum += weight
      if (!catalog.benchmarkIndex.has(benchmark)) {
        at(["task_types", index, "benchmark_weights", benchmark], "unknown benchmark id (not in the catalog)")
      }
    }
    if (Math.abs(sum - 1) > WEIGHT_SUM_TOLERANCE) {
      const expected = `expected 1 (within ${WEIGHT_SUM_TOLERANCE})`
      at(["task_types", index, "benchmark_weights"], `weights sum to ${Number(sum.toPrecision(6))}, ${expected}`)
    }
    const isDefault = taxonomy.family_defaults[type.family] === type.id
    if (type.default_for_family !== undefined && type.default_for_family !== isDefault) {
      at(["task_types", index, "default_for_family"], `is ${type.default_for_family} but family_defaults disagrees`)
    }
  })
  taxonomy.families.forEach((family, index) => {
    const chosen = taxonomy.family_defaults[family]
    if (chosen === undefined) at(["family_defaults", family], "is missing: every family needs a default task type")
    else if (ids.get(chosen) !== family) {
      at(["family_defaults", family], `"${chosen}" is not a task type of family "${family}"`)
    }
    const count = taxonomy.task_types.filter((type) => type.family === family).length
    if (count > MAX_TASK_TYPES_PER_FAMILY) {
      at(["families", index], `family "${family}" has ${count} task types, at most ${MAX_TASK_TYPES_PER_FAMILY}`)
    }
  })
  for (const family of Object.keys(taxonomy.family_defaults)) {
    if (!families.has(family)) at(["family_defaults", family], "unknown family (not in families)")
  }
  return issues
}

/** Builds the lookup view of a valid taxonomy file (pure; `taxonomyIssues` must be empty). */
export const buildTaxonomy = (file: TaxonomyFile): Taxonomy => {
  const taskTypes = file.task_types.map((type): TaskType => ({
    id: type.id,
    family: type.family,
    description: type.description,
    benchmarkWeights: type.benchmark_weights,
    expectedOutputTokens: type.expected_output_tokens,
    expectedTurns: type.expected_turns
  }))
  const taskTypesById = new Map(taskTypes.map((type) => [type.id, type]))
  return {
    file,
    families: file.families,
    familyDefaults: new Map(
      file.families.flatMap((family) => {
        const type = taskTypesById.get(file.family_defaults[family] ?? "")
        return type === undefined ? [] : [[family, type] as const]
      })
    ),
    taskTypes,
    taskTypesById,
    taskTypesByFamily: new Map(
      file.families.map((family) => [family, taskTypes.filter((type) => type.family === family)])
    )
  }
}

/** Decodes, checks and builds a taxonomy from parsed JSON against `catalog`; `file` names the source. */
export const parseTaxonomy = (
  file: string,
  json: unknown,
  catalog: Catalog
): Effect.Effect<Taxonomy, TaxonomyInvalid> =>
  Result.match(decodeDataFile(TaxonomyFile, file, json, TASK_TYPES), {
    onFailure: (message) => Effect.fail(new TaxonomyInvalid({ message })),
    onSuccess: (decoded) => {
      const issues = taxonomyIssues(file, json, decoded, catalog)
      return issues.length > 0
        ? Effect.fail(new TaxonomyInvalid({ message: joinIssues(issues) }))
        : Effect.succeed(buildTaxonomy(decoded))
    }
  })

/** Reads, validates and builds the task-types file at `path` against the loaded catalog. */
export const loadTaxonomy = (path: string, catalog: Catalog): Effect.Effect<Taxonomy, TaxonomyInvalid> =>
  readJsonFile(path).pipe(
    Effect.mapError((message) => new TaxonomyInvalid({ message })),
    Effect.flatMap((json) => parseTaxonomy(path, json, catalog))
  )
