/**
 * From a decoded `POST /v1/router/select` body to what a selection needs, checking what the schema cannot, in this
 * order (the first problem wins): exactly one of `prompt` and `messages`, and not empty (`invalid_body`); `policy`
 * (`invalid_policy`); `task_type`, then `domain`, against the taxonomy (`invalid_body` naming the field); `weights`
 * only with `balanced` (`weights_require_balanced`); every id of `models.include`, then `models.exclude`, in the
 * catalog (`unknown_model_id` naming it). Also fixes the request digest that decides idempotent equality: the
 * canonical JSON of the body with null fields dropped, an empty `models` or `weights` dropped, and the defaults
 * (`balanced`, `standard`) filled in, so an omitted field, its null and its explicit default all match.
 */
import { Result } from "effect"
import { InvalidBody, InvalidPolicy, UnknownModelId, WeightsRequireBalanced } from "../../schema/Errors.js"
import type { SelectRequest } from "../../schema/RouterApi.js"
import { canonicalDigest } from "../encoding/CanonicalJson.js"
import { utf8Bytes } from "../encoding/Utf8.js"
import { renderMessages } from "../runs/StateRendering.js"
import type { Catalog } from "./Catalog.js"
import type { FixedTask } from "./classification/ClassificationQuestions.js"
import type { CatalogFilters } from "./Filters.js"
import { ROUTER_POLICIES, type RouterPolicy } from "./Policies.js"
import type { BalancedWeights, LatencyClass } from "./ScoringConstants.js"
import type { Taxonomy } from "./Taxonomy.js"

/** A checked select request, in the router's terms. */
export interface SelectionRequest {
  /** The whole task as one text: the prompt, or the turns joined as `role: content` paragraphs. */
  readonly text: string
  readonly policy: RouterPolicy
  readonly fixed: FixedTask
  readonly latency: LatencyClass
  readonly weights: BalancedWeights | null
  readonly filters: CatalogFilters
  readonly maxLatencyMs: number | null
  /** ceil(UTF-8 bytes of the whole task / 4): what a ranked model would read. */
  readonly inputTokensEst: number
  /** SHA-256 of the normalized body; the classification run's `input_digest`. */
  readonly digest: string
}

/** Why a select body is refused before anything is charged. */
export type SelectRequestError = InvalidBody | InvalidPolicy | WeightsRequireBalanced | UnknownModelId

const isPlainObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A JSON value with its null object members removed (recursively) and empty objects turned into undefined. */
const withoutNulls = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutNulls)
  if (!isPlainObject(value)) return value ?? undefined
  const entries = Object.entries(value).flatMap(([key, item]) => {
    const kept = withoutNulls(item)
    return kept === undefined ? [] : [[key, kept] as const]
  })
  return entries.length === 0 ? undefined : Object.fromEntries(entries)
}

const quote = (text: string): string => JSON.stringify(text)

const unknownIn = (catalog: Catalog, field: "include" | "exclude", ids: ReadonlyArray<string> | undefined) => {
  const unknown = (ids ?? []).find((id) => !catalog.modelsById.has(id))
  return unknown === undefined ? null : new UnknownModelId({
    message: `models.${field}: unknown model id ${quote(unknown)} (see GET /v1/router/models)`
  })
}

/** The whole task as one text: exactly one of `prompt` (not blank) and `messages` (not empty) is sent. */
const taskText = (request: SelectRequest): Result.Result<string, InvalidBody> => {
  const prompt = request.prompt ?? undefined
  const messages = request.messages ?? undefined
  if ((prompt === undefined) === (messages === undefined)) {
    return Result.fail(new InvalidBody({ message: "send exactly one of `prompt` and `messages`" }))
  }
  if (messages !== undefined && messages.length === 0) {
    return Result.fail(new InvalidBody({ message: "messages: at least one turn is needed" }))
  }
  if (prompt !== undefined && prompt.trim() === "") {
    return Result.fail(new InvalidBody({ message: "prompt: the task text is empty" }))
  }
  return Result.succeed(messages === undefined ? prompt! : renderMessages(messages))
}

/** The request's choices. */
interface Choices {
  readonly policy: string
  readonly taskType: string | undefined
  readonly domain: string | undefined
  readonly weights: NonNullable<SelectRequest["weights"]> | null
}

/** The request's choices, checked: a known policy, task type and domain, and weights only with `balanced`. */
const checkChoices = (
  request: SelectRequest,
  taxonomy: Taxonomy
): Result.Result<Choices, InvalidBody | InvalidPolicy | WeightsRequireBalanced> => {
  const policy = request.policy ?? "balanced"
  if (!(ROUTER_POLICIES as ReadonlyArray<string>).includes(policy)) {
    return Result.fail(new InvalidPolicy({
      message: `policy must be one of ${ROUTER_POLICIES.join(", ")}; got ${quote(policy)}`
    }))
  }
  const taskType = request.task_type ?? undefined
  if (taskType !== undefined && !taxonomy.taskTypesById.has(taskType)) {
    return Result.fail(new InvalidBody({
      message: `task_type: unknown task type ${quote(taskType)} (see GET /v1/router/task-types)`
    }))
  }
  const domain = request.domain ?? undefined
  if (domain !== undefined && !taxonomy.families.includes(domain)) {
    return Result.fail(new InvalidBody({
      message: `domain: unknown domain ${quote(domain)} (expected one of ${taxonomy.families.join(", ")})`
    }))
  }
  const weights = request.weights ?? null
  if (weights !== null && policy !== "balanced") {
    return Result.fail(new WeightsRequireBalanced({
      message: `weights apply to the balanced policy only; this request uses ${policy}`
    }))
  }
  return Result.succeed({ policy, taskType, domain, weights })
}

/** Checks a decoded body against the catalog and the taxonomy; the first problem in the order above wins. */
export const checkSelectRequest = (
  request: SelectRequest,
  data: { readonly catalog: Catalog; readonly taxonomy: Taxonomy }
): Result.Result<SelectionRequest, SelectRequestError> => {
  const text = taskText(request)
  if (Result.isFailure(text)) return Result.fail(text.failure)
  const choices = checkChoices(request, data.taxonomy)
  if (Result.isFailure(choices)) return Result.fail(choices.failure)
  const { domain, policy, taskType, weights } = choices.success
  const filters = request.models ?? {}
  const unknown = unknownIn(data.catalog, "include", filters.include) ?? unknownIn(data.catalog, "exclude", filters.exclude)
  if (unknown !== null) return Result.fail(unknown)
  const latency = request.latency ?? "standard"
  return Result.succeed({
    text: text.success,
    policy: policy as RouterPolicy,
    fixed: { ...(taskType === undefined ? {} : { taskType }), ...(domain === undefined ? {} : { domain }) },
    latency,
    weights: weights === null
      ? null
      : { quality: weights.quality ?? 0, cost: weights.cost ?? 0, speed: weights.speed ?? 0 },
    filters,
    maxLatencyMs: request.max_latency_ms ?? null,
    inputTokensEst: Math.ceil(utf8Bytes(text.success) / 4),
    digest: canonicalDigest({
      kind: "router_select",
      ...(withoutNulls(request) as object),
      policy,
      latency
    })
  })
}
