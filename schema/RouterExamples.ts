/**
 * Examples of the router routes for the OpenAPI document: a selection as the service answers it with the built-in
 * `local` decision model (its ranking cut to two entries), and the catalog and taxonomy cut to one entry each. Plain
 * data that imports nothing: RouterApi.ts checks each against its wire schema where it applies it (`satisfies` the
 * schema's encoded type), and test/openapi/OpenApiDocument.test.ts validates each against the emitted document.
 */

/** A debugging task ranked for cost among three models (the README's selection). */
export const SelectRequestExample = {
  prompt: "Debug this Python program: the script crashes with a KeyError stack trace when the config file lacks a " +
    "key. Fix the code.",
  policy: "cost_efficient",
  models: { include: ["openai/gpt-5.4-mini", "google/gemini-3-flash-preview", "anthropic/claude-haiku-4.5"] }
} as const

/** The selection answering {@link SelectRequestExample}. */
export const SelectResponseExample = {
  id: "rtr_01a20c15-9fdb-7c05-940b-3e38b1df8bc2",
  run_id: "run_01a20c159fdb7c05940b3e38b1df8bc2",
  policy: "cost_efficient",
  model: {
    id: "google/gemini-3-flash-preview",
    name: "Gemini 3 Flash Preview (Reasoning)",
    provider: "google",
    open_weights: false
  },
  classification: {
    domain: {
      label: "coding",
      probabilities: {
        coding: 0.9787609721974727,
        math: 0.0007781197941337343,
        reasoning: 0.0004914993370251047,
        knowledge: 0.0009373091422950885,
        agentic: 0.01167292635966383,
        long_context: 0.0034785776238613086,
        writing: 0.0011878613626555728,
        multilingual: 0.001846757006869999,
        general: 0.0008459771760227111
      }
    },
    difficulty: {
      label: "easy",
      probabilities: { easy: 0.8629255571847881, medium: 0.06542577856091858, hard: 0.07164866425429335 }
    },
    task_type: {
      label: "coding.debugging",
      family: "coding",
      top: [
        { label: "coding.debugging", probability: 0.955929963949508 },
        { label: "coding.code_generation", probability: 0.03200279416915726 },
        { label: "coding.code_editing", probability: 0.004581654911737279 },
        { label: "coding.agentic_software_engineering", probability: 0.0031339348370343855 },
        { label: "coding.code_review_explanation", probability: 0.0021677408947301875 }
      ],
      fixed: false
    },
    facets: {
      needs_code_output: 0.6764929341192535,
      needs_long_context: 0.02,
      multi_step: 0.5916915240844604,
      non_english: 0.02,
      needs_tools: 0.15814009240130297
    }
  },
  ranking: [
    {
      id: "google/gemini-3-flash-preview",
      name: "Gemini 3 Flash Preview (Reasoning)",
      provider: "google",
      open_weights: false,
      score: -0.11126,
      blended_price_per_mtok: 1.125,
      domain_score: 0.679419,
      expected_quality: 0.679419,
      uncertainty: 0.2,
      estimated_cost_usd: 0.11126,
      estimated_latency_ms: 10959.3,
      latency_estimated: false,
      strengths: [
        { benchmark: "livebench_coding", name: "LiveBench Coding (release 2026-01-08)", contribution: 0.1792 },
        { benchmark: "aa_terminal_bench_hard", name: "Terminal-Bench Hard (AA run)", contribution: 0.146575 },
        {
          benchmark: "aa_intelligence_index",
          name: "Artificial Analysis Intelligence Index (v4.x)",
          contribution: 0.115009
        }
      ],
      weaknesses: [
        { benchmark: "aa_terminal_bench_hard", name: "Terminal-Bench Hard (AA run)", gap: 0.0517 },
        {
          benchmark: "livebench_agentic_coding",
          name: "LiveBench Agentic Coding (release 2026-01-08)",
          gap: 0.02032
        }
      ],
      imputed: ["aa_intelligence_index", "reasoning_token_factor"]
    },
    {
      id: "openai/gpt-5.4-mini",
      name: "GPT-5.4 mini (xhigh)",
      provider: "openai",
      open_weights: false,
      score: -0.539773,
      blended_price_per_mtok: 1.6875,
      domain_score: 0.75688,
      expected_quality: 0.75688,
      uncertainty: 0,
      estimated_cost_usd: 0.539773,
      estimated_latency_ms: 13270,
      latency_estimated: false,
      strengths: [
        { benchmark: "aa_terminal_bench_hard", name: "Terminal-Bench Hard (AA run)", contribution: 0.198275 },
        { benchmark: "livebench_coding", name: "LiveBench Coding (release 2026-01-08)", contribution: 0.1737 },
        {
          benchmark: "aa_intelligence_index",
          name: "Artificial Analysis Intelligence Index (v4.x)",
          contribution: 0.12986
        }
      ],
      weaknesses: [
        { benchmark: "livebench_coding", name: "LiveBench Coding (release 2026-01-08)", gap: 0.0055 },
        { benchmark: "lmarena_text_coding_elo", name: "LMArena text arena, coding category", gap: 0.00333 }
      ],
      imputed: []
    }
  ],
  score_basis: "benchmarks",
  difficulty_floor: 0.640179,
  threshold: { q_star: 0.75688, r: 0.845813, tau: 0.640179 },
  filters_applied: [{ filter: "include", removed: 64 }],
  low_confidence: false,
  input_tokens_est: 31,
  reason: "Chose Gemini 3 Flash Preview (Reasoning): expected quality 0.68 (bar 0.64 at easy difficulty), " +
    "estimated $0.111 and 11.0 s for this coding.debugging task; cheapest above the bar among 3 " +
    "eligible models.",
  decision_model: "decision-1",
  catalog_as_of: "2026-08-22",
  benchmarks_as_of: "2026-08-22",
  usage: { input_tokens: 1435, output_tokens: 8 },
  cost_micros: 72,
  replayed: false
} as const

/** The catalog, one model shown. */
export const ModelCatalogExample = {
  as_of: "2026-08-22",
  benchmarks_as_of: "2026-08-22",
  source: "Public snapshots: Artificial Analysis leaderboard payload (2026-08-22) and API snapshot " +
    "(2026-04-09), LiteLLM model_prices_and_context_window.json (2026-07-24), OpenRouter /api/v1/models" +
    " (2026-08-01), LiveBench release 2026-01-08 (site repo 2026-07-01), Epoch AI Benchmarking Hub CSVs" +
    " (~2026-04-17), LMArena text leaderboards (2026-08-22), lechmazur/writing (2026-05-29), Aider " +
    "polyglot leaderboard (2025-10-04). See README.md for repositories, paths and commits.",
  domains: [
    "coding",
    "math",
    "reasoning",
    "knowledge",
    "agentic",
    "long_context",
    "writing",
    "multilingual",
    "general"
  ],
  task_types: [
    "coding.code_generation",
    "coding.code_editing",
    "coding.debugging",
    "coding.agentic_software_engineering",
    "coding.scientific_computing",
    "coding.code_review_explanation",
    "coding.sql_data_transformation",
    "math.competition",
    "math.applied_quantitative",
    "math.research_proofs",
    "reasoning.logic_puzzles",
    "reasoning.scientific_qa",
    "reasoning.analysis_decision",
    "knowledge.factual_qa",
    "knowledge.expert_domain",
    "knowledge.explanation_tutoring",
    "agentic.tool_use_conversation",
    "agentic.terminal_automation",
    "agentic.professional_workflows",
    "agentic.research_synthesis",
    "long_context.document_qa",
    "long_context.multi_document_synthesis",
    "long_context.codebase_understanding",
    "writing.creative",
    "writing.professional",
    "writing.editing_rewriting",
    "writing.summarization",
    "multilingual.translation",
    "multilingual.non_english_assistant",
    "general.chat_assistant",
    "general.classification_extraction",
    "general.image_understanding",
    "general.format_constrained"
  ],
  policies: ["balanced", "cost_efficient", "capability_heavy", "domain_skills"],
  models: [
    {
      id: "openai/gpt-5.6-sol",
      name: "GPT-5.6 Sol (max)",
      provider: "openai",
      open_weights: false,
      context_tokens: 1050000,
      modalities: ["text", "image"],
      price_input_per_mtok: 5,
      price_output_per_mtok: 30,
      blended_price_per_mtok: 11.25,
      reasoning_token_factor: 10.57,
      scores: {
        intelligence: 0.9663,
        coding: 0.965,
        math: null,
        reasoning: 0.9535,
        knowledge: 0.7595,
        agentic: 0.9153,
        long_context: 0.9321,
        instruction_following: 0.8897,
        multilingual: null
      },
      domains: ["coding", "reasoning", "knowledge", "agentic", "long_context", "writing", "general"],
      highlights: [
        {
          benchmark: "aa_critpt",
          name: "CritPt physics research problems (AA run)",
          value: 0.3229,
          rank: 1,
          of: 66
        },
        {
          benchmark: "aa_terminal_bench_hard",
          name: "Terminal-Bench Hard (AA run)",
          value: 0.6591,
          rank: 1,
          of: 50
        },
        { benchmark: "aa_gpqa_diamond", name: "GPQA Diamond (AA run)", value: 0.9414, rank: 3, of: 67 }
      ],
      benchmarks_measured: 17,
      license: "proprietary",
      released: "2026-07-09",
      output_tokens_per_s: 70.9,
      ttft_ms: 100972
    }
  ]
} as const

/** The taxonomy, one task type shown. */
export const TaskTypeListingExample = {
  as_of: "2026-11-22",
  families: [
    "coding",
    "math",
    "reasoning",
    "knowledge",
    "agentic",
    "long_context",
    "writing",
    "multilingual",
    "general"
  ],
  task_types: [
    {
      id: "coding.code_generation",
      family: "coding",
      description: "Write new functions, scripts or small programs from a natural-language specification.",
      benchmark_weights: {
        livebench_coding: 0.25,
        aa_scicode: 0.15,
        aa_livecodebench: 0.1,
        lmarena_text_coding_elo: 0.15,
        aider_polyglot: 0.05,
        aa_terminal_bench_hard: 0.1,
        aa_intelligence_index: 0.2
      },
      expected_output_tokens: 900,
      expected_turns: 1
    }
  ]
} as const
