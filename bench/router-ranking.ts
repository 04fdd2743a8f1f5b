/**
 * Time of one `rank` call over the shipped catalog (67 models), per policy: median and p99 in microseconds over
 * 2,000 calls after 2,000 warm-up calls, for a three-type coding task and for the same task with filters.
 * Run: `node --import tsx bench/router-ranking.ts` (also the first part of `npm run bench:router`).
 */
import { Effect } from "effect"
import { fileURLToPath, pathToFileURL } from "node:url"
import { loadCatalog } from "../src/router/Catalog.js"
import { ROUTER_POLICIES } from "../src/router/Policies.js"
import { rank, type RankInput } from "../src/router/Ranking.js"
import { loadTaxonomy } from "../src/router/Taxonomy.js"

const WARM_UP = 2_000
const ITERATIONS = 2_000

const dataFile = (name: string) => fileURLToPath(new URL(`../data/${name}`, import.meta.url))

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

const measure = (input: RankInput): { readonly median: number; readonly p99: number } => {
  for (let i = 0; i < WARM_UP; i++) rank(input)
  const samples: Array<number> = []
  for (let i = 0; i < ITERATIONS; i++) {
    const start = process.hrtime.bigint()
    rank(input)
    samples.push(Number(process.hrtime.bigint() - start) / 1000)
  }
  samples.sort((a, b) => a - b)
  return { median: quantile(samples, 0.5), p99: quantile(samples, 0.99) }
}

/** Prints the time of one `rank` call per policy, with and without filters. */
export const printRankingTimes = Effect.gen(function*() {
  const catalog = yield* loadCatalog(dataFile("catalog.json"))
  const taxonomy = yield* loadTaxonomy(dataFile("task-types.json"), catalog)
  const base: RankInput = {
    catalog,
    taxonomy,
    taskDistribution: [
      { taskType: "coding.code_generation", probability: 0.6 },
      { taskType: "coding.debugging", probability: 0.3 },
      { taskType: "math.applied_quantitative", probability: 0.1 }
    ],
    topTaskType: "coding.code_generation",
    difficulty: 0.6,
    policy: "balanced",
    weights: null,
    latency: "standard",
    filters: {},
    maxLatencyMs: null,
    inputTokensEst: 2_000
  }
  const filtered: Partial<RankInput> = {
    filters: {
      exclude: ["openai/gpt-5.5"],
      providers: ["openai", "anthropic", "google", "alibaba"],
      modalities: ["image"]
    },
    maxLatencyMs: 120_000
  }
  console.log(`rank() over ${catalog.models.length} models, ${ITERATIONS} calls after ${WARM_UP} warm-up, microseconds`)
  console.log("policy            no filters: median    p99   with filters: median    p99")
  for (const policy of ROUTER_POLICIES) {
    const plain = measure({ ...base, policy })
    const narrowed = measure({ ...base, ...filtered, policy })
    console.log(
      `${policy.padEnd(18)}${plain.median.toFixed(1).padStart(18)}${plain.p99.toFixed(1).padStart(7)}` +
        `${narrowed.median.toFixed(1).padStart(23)}${narrowed.p99.toFixed(1).padStart(7)}`
    )
  }
})

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  Effect.runSync(printRankingTimes)
}
