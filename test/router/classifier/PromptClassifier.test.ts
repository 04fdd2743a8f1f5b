/**
 * The shipped classifier (`data/router-classifier.json`): it loads, classifies deterministically into proper
 * distributions (task types and families summing to 1, every type possible, difficulty levels summing back to the
 * labels, facets in [0, 1]), puts unambiguous requests where they belong, reaches every one of the 33 task types,
 * and reads a long task's excerpt with the task's real length.
 */
import { assert, describe, it } from "@effect/vitest"
import { shippedClassifier } from "../../../src/router/classifier/RouterAnswers.js"
import { classifyState, type PromptClassification } from "../../../src/router/classifier/PromptClassifier.js"
import { promptExcerpt } from "../../../src/router/classification/PromptExcerpt.js"
import { realTaxonomy } from "../fixtures/RouterFixtures.js"

const model = shippedClassifier()

const classify = (task: string): PromptClassification => classifyState(model, promptExcerpt(task))

const top = (probabilities: ReadonlyMap<string, number>): string =>
  [...probabilities].reduce((best, item) => (item[1] > best[1] ? item : best))[0]

const sum = (values: Iterable<number>): number => [...values].reduce((total, value) => total + value, 0)

const LEASE = [
  "1. Parties. This lease is made between the landlord named in the schedule and the tenant who signs below.",
  "2. Term. The tenancy runs for twelve months from the start date and continues month to month afterwards.",
  "3. Rent. The tenant pays the agreed rent on the first day of each month by bank transfer.",
  "4. Deposit. A deposit equal to one month of rent is held in a protected scheme and returned within thirty days.",
  "5. Repairs. The landlord keeps the structure, the heating system and the plumbing in good repair.",
  "6. Use. The tenant uses the property as a private home only and does not sublet any part of it.",
  "7. Access. The landlord may enter with twenty-four hours of written notice, except in an emergency.",
  "8. Ending. Either party may end the tenancy after the first term with two months of written notice."
].join("\n") + "\n\n"

const STACK_TRACE = `Traceback (most recent call last):
  File "billing.py", line 27, in <module>
    total = compute_total(order)
  File "billing.py", line 14, in compute_total
    return sum(item["price"] for item in order["items"])
KeyError: 'items'`

describe("shipped classifier: shape", () => {
  it("covers the shipped taxonomy's families and task types, in its order", () => {
    assert.deepStrictEqual(model.labels.families, realTaxonomy.families)
    assert.deepStrictEqual(model.labels.taskTypes.map((type) => type.id), realTaxonomy.taskTypes.map((type) => type.id))
  })

  it("is deterministic and gives proper distributions", () => {
    for (const task of ["Write a haiku about autumn leaves", STACK_TRACE, "x", "¿Dónde está la estación de tren?"]) {
      const first = classify(task)
      assert.deepStrictEqual(classify(task), first)
      assert.strictEqual(first.taskTypes.size, 33)
      assert.closeTo(sum(first.taskTypes.values()), 1, 1e-9)
      assert.closeTo(sum(first.families.values()), 1, 1e-9)
      for (const p of first.taskTypes.values()) assert.isAbove(p, 0, "every type keeps the floor")
      assert.closeTo(sum(first.difficulty), 1, 1e-9)
      assert.strictEqual(first.levels.length, 5)
      assert.closeTo(first.levels[0]! + first.levels[1]!, first.difficulty[0], 1e-12)
      assert.closeTo(first.levels[2]!, first.difficulty[1], 1e-12)
      assert.closeTo(first.levels[3]! + first.levels[4]!, first.difficulty[2], 1e-12)
      for (const value of Object.values(first.facets)) assert.isTrue(value >= 0 && value <= 1)
    }
  })
})

describe("shipped classifier: unambiguous requests", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["Write a haiku about autumn leaves", "writing.creative"],
    ["Prove that there is no largest prime number.", "math.research_proofs"],
    [`My script crashes, how do I fix it?\n\n${STACK_TRACE}`, "coding.debugging"],
    ["Write a SQL query that returns the ten customers with the highest total order value", "coding.sql_data_transformation"],
    ["Translate this sentence into German: the train leaves at nine tomorrow morning.", "multilingual.translation"],
    ["Quels sont les meilleurs endroits à visiter en Bretagne en été ?", "multilingual.non_english_assistant"]
  ]
  for (const [task, expected] of cases) {
    it(`${expected}: ${task.split("\n")[0]!.slice(0, 60)}`, () => {
      const result = classify(task)
      assert.strictEqual(top(result.taskTypes), expected)
      assert.strictEqual(top(result.families), expected.slice(0, expected.indexOf(".")))
    })
  }

  it("facets follow the request: a French question is non-English, a SQL request needs code, a long paste long context", () => {
    assert.isAbove(classify("Quels sont les meilleurs endroits à visiter en Bretagne en été ?").facets.non_english, 0.8)
    assert.isBelow(classify("Write a haiku about autumn leaves").facets.non_english, 0.2)
    assert.isAbove(classify("Write a SQL query that lists every order placed in May").facets.needs_code_output, 0.7)
    assert.isBelow(classify("Write a haiku about autumn leaves").facets.needs_code_output, 0.2)
    const report = "The committee reviewed the annual figures and the regional plans in detail. ".repeat(600)
    const long = classify(`${report}\n\nWhat did the committee decide about the regional plans?`)
    assert.isAbove(long.facets.needs_long_context, 0.8)
    assert.isBelow(classify("What is the capital of Peru?").facets.needs_long_context, 0.2)
  })
})

describe("shipped classifier: every task type is reachable", () => {
  const probes: ReadonlyArray<readonly [string, string]> = [
    ["coding.code_generation", "Write a Python function that returns the median of a list of numbers."],
    ["coding.code_editing", "Refactor this function to use a dictionary instead of the long if/elif chain, keeping its behaviour:\n\ndef grade(s):\n    if s > 90:\n        return 'A'\n    elif s > 80:\n        return 'B'\n    else:\n        return 'C'"],
    ["coding.debugging", `Why does this fail?\n\n${STACK_TRACE}`],
    ["coding.agentic_software_engineering", "Check out the repository, fix the failing tests in the CI pipeline, and open a pull request with the patch."],
    ["coding.scientific_computing", "Write a numpy simulation of heat diffusion along a metal rod using finite differences and plot the temperature profile."],
    ["coding.code_review_explanation", "Explain what this code does, line by line:\n\n```js\nconst counts = words.reduce((m, w) => m.set(w, (m.get(w) || 0) + 1), new Map())\n```"],
    ["coding.sql_data_transformation", "Write a SQL query that returns the number of orders per month in 2023."],
    ["math.competition", "Find the number of positive integers n less than 1000 such that n^2 + 1 is divisible by 13."],
    ["math.applied_quantitative", "If a jacket costs $80 and is on sale for 30% off, what is the sale price?"],
    ["math.research_proofs", "Prove that every compact metric space is complete."],
    ["reasoning.logic_puzzles", "Knights always tell the truth and knaves always lie. A says: 'B is a knave.' B says: 'We are both knights.' Who is what?"],
    ["reasoning.scientific_qa", "Why does increasing the temperature shift the equilibrium of an exothermic reaction toward the reactants? Explain in terms of Le Chatelier's principle."],
    ["reasoning.analysis_decision", "Should our five-person startup build its own billing system or buy a SaaS product? Weigh the trade-offs."],
    ["knowledge.factual_qa", "Who wrote the novel One Hundred Years of Solitude?"],
    ["knowledge.expert_domain", "What are the tax consequences of exercising incentive stock options early in the US?"],
    ["knowledge.explanation_tutoring", "Can you explain how photosynthesis works in simple terms, like I'm a beginner?"],
    ["agentic.tool_use_conversation", "Book me a hotel room in Madrid for two nights starting Friday and send the confirmation to my email."],
    ["agentic.terminal_automation", "Find all files larger than 1GB under /var and delete the ones older than 60 days."],
    ["agentic.professional_workflows", "Open the budget spreadsheet, make a pivot table of spending by department and paste the chart into the slide deck."],
    ["agentic.research_synthesis", "Search the web for the latest studies on microplastics in drinking water and write a summary citing your sources."],
    ["long_context.document_qa", `${LEASE.repeat(12)}\n\nAccording to the lease above, who is responsible for repairing the heating system?`],
    ["long_context.multi_document_synthesis", `Compare these three reports and reconcile where they disagree.\n\n${[1, 2, 3].map((n) => `=== Report ${n} ===\n${"Sales in the region grew while costs rose faster than planned, and the team asked for more staff. ".repeat(60)}`).join("\n\n")}`],
    ["long_context.codebase_understanding", `Here are the files of our service. Where is the user's session created and where is it checked?\n\n${["auth.py", "session.py", "views.py"].map((file) => `# File: app/${file}\n\`\`\`python\n${"def handler(request):\n    session = load_session(request.cookies.get('sid'))\n    return render(request, session)\n\n".repeat(30)}\`\`\``).join("\n\n")}`],
    ["writing.creative", "Write a short story about a lighthouse keeper who finds a message in a bottle."],
    ["writing.professional", "Draft a professional email to a client apologizing for the delayed shipment and offering a discount."],
    ["writing.editing_rewriting", "Proofread this and fix the grammar: their going to announce the results tomorow, and me and him was not invited."],
    ["writing.summarization", "Summarize this article in three bullet points: The city council approved a new cycling plan that adds 40 km of protected bike lanes over four years, funded by a parking levy, after a long public consultation in which shop owners raised concerns about deliveries."],
    ["multilingual.translation", "Translate into Spanish: The museum is closed on Mondays."],
    ["multilingual.non_english_assistant", "Wie kann ich am besten Deutsch lernen, wenn ich wenig Zeit habe?"],
    ["general.chat_assistant", "What are some fun things to do with kids on a rainy weekend?"],
    ["general.classification_extraction", "Classify the sentiment of this review as positive or negative: 'The food was cold and the waiter was rude.'"],
    ["general.image_understanding", "What is shown in this photo I uploaded? Describe the objects in the image."],
    ["general.format_constrained", "Answer in exactly three words, all lowercase, no punctuation: what is your favourite season?"]
  ]

  it("has one probe for each of the 33 task types", () => {
    assert.deepStrictEqual(probes.map(([type]) => type), realTaxonomy.taskTypes.map((type) => type.id))
  })

  for (const [type, task] of probes) {
    it(`${type} is the most probable type of its probe`, () => {
      assert.strictEqual(top(classify(task).taskTypes), type)
    })
  }
})
