/**
 * The language rule (decisions.md, Router) in the shipped classifier: a prompt's family is its task in any
 * language (a Chinese olympiad problem is maths, a Japanese request for a Python script is coding, a Spanish short
 * story is writing), the language is the `non_english` facet, and only translation and general requests in another
 * language are `multilingual`. Also the failures the rule and the chat-style training data address: a riddle is
 * reasoning, a podcast script is writing, advice is general, a pasted stack trace is coding, and a terse line of
 * algebra is maths in English. `applyLanguageRule` itself moves exactly the general mass times P(not English).
 */
import { assert, describe, it } from "@effect/vitest"
import { applyLanguageRule, NON_ENGLISH_GENERAL_TYPE } from "../../../src/router/classifier/LanguageRule.js"
import { classifyState, type PromptClassification } from "../../../src/router/classifier/PromptClassifier.js"
import { shippedClassifier } from "../../../src/router/classifier/RouterAnswers.js"
import { promptExcerpt } from "../../../src/router/classification/PromptExcerpt.js"

const model = shippedClassifier()

const classify = (task: string): PromptClassification => classifyState(model, promptExcerpt(task))

const top = (probabilities: ReadonlyMap<string, number>): string =>
  [...probabilities].reduce((best, item) => (item[1] > best[1] ? item : best))[0]

const TRACE = `Traceback (most recent call last):
  File "app.py", line 12, in <module>
    main()
  File "app.py", line 8, in main
    total = sum(row["amount"] for row in rows)
TypeError: unsupported operand type(s) for +: 'int' and 'str'`

/** [prompt, family, English?] */
const cases: ReadonlyArray<readonly [string, string, boolean]> = [
  ["设正整数a,b,c满足a+b+c=2024，且a,b,c两两互素，求abc的最大可能值，并证明你的结论。", "math", false],
  ["Pythonで、フォルダ内の画像ファイルを撮影日ごとにサブフォルダへ振り分けるスクリプトを書いてください。", "coding", false],
  ["Escribe un cuento corto sobre un faro abandonado y la niña que lo vuelve a encender.", "writing", false],
  ["最近ストレスが溜まっています。気分転換の方法を教えてください。", "multilingual", false],
  ["Traduce al inglés: Mañana llegaré tarde a la reunión.", "multilingual", false],
  ["What has keys but can't open locks, and space but no room?", "reasoning", true],
  ["Write a script for the first episode of my podcast about the history of coffee, two hosts, 10 minutes.", "writing", true],
  ["how do I deal with stress at work? I feel overwhelmed all the time", "general", true],
  [`${TRACE}\n\nwhy does this fail?`, "coding", true],
  ["x^2 - 5x + 6 = 0", "math", true]
]

describe("the language rule in the shipped classifier", () => {
  for (const [prompt, family, english] of cases) {
    it(`${family}: ${prompt.replace(/\s+/g, " ").slice(0, 60)}`, () => {
      const result = classify(prompt)
      assert.strictEqual(top(result.families), family)
      if (english) assert.isBelow(result.facets.non_english, 0.5)
      else assert.isAbove(result.facets.non_english, 0.5)
    })
  }

  it("a general request in another language is non_english_assistant; the same in English is general", () => {
    assert.strictEqual(top(classify("最近ストレスが溜まっています。気分転換の方法を教えてください。").taskTypes), NON_ENGLISH_GENERAL_TYPE)
    assert.strictEqual(classify("how do I deal with stress at work? I feel overwhelmed all the time").taskTypes.get(NON_ENGLISH_GENERAL_TYPE)! < 0.05, true)
  })
})

describe("facets of the examples", () => {
  it("a video or podcast script asks for no code; a Python script does", () => {
    assert.isBelow(classify("Write a script for the first episode of my podcast about the history of coffee, two hosts, 10 minutes.").facets.needs_code_output, 0.5)
    assert.isBelow(classify("write a script for a 3 minute youtube video about the history of coffee").facets.needs_code_output, 0.5)
    assert.isAbove(classify("write a python script that renames my photos by date").facets.needs_code_output, 0.7)
  })
})

describe("applyLanguageRule", () => {
  const labels = {
    families: ["general", "multilingual", "math"],
    taskTypes: [
      { id: "general.chat_assistant", family: "general" },
      { id: "general.format_constrained", family: "general" },
      { id: "multilingual.translation", family: "multilingual" },
      { id: NON_ENGLISH_GENERAL_TYPE, family: "multilingual" },
      { id: "math.applied_quantitative", family: "math" }
    ]
  }

  it("moves P(not English) of the general mass to the non-English type and keeps the rest's proportions", () => {
    const moved = applyLanguageRule(labels, Float64Array.from([0.3, 0.1, 0.1, 0.1, 0.4]), 0.75)
    assert.closeTo(moved[3]!, 0.5 * 0.75, 1e-12)
    assert.closeTo(moved[0]! + moved[1]!, 0.5 * 0.25, 1e-12)
    assert.closeTo(moved[0]! / moved[1]!, 3, 1e-9)
    assert.strictEqual(moved[2], 0.1)
    assert.strictEqual(moved[4], 0.4)
    assert.closeTo(moved.reduce((a, b) => a + b, 0), 1, 1e-12)
  })

  it("in English the non-English type's own mass goes back to the general types", () => {
    const moved = applyLanguageRule(labels, Float64Array.from([0, 0, 0.2, 0.3, 0.5]), 0)
    assert.strictEqual(moved[3], 0)
    assert.closeTo(moved[0]!, 0.15, 1e-12)
    assert.closeTo(moved[1]!, 0.15, 1e-12)
  })

  it("leaves a taxonomy without the labels alone", () => {
    const other = { families: ["a"], taskTypes: [{ id: "a.x", family: "a" }] }
    assert.deepStrictEqual([...applyLanguageRule(other, Float64Array.from([1]), 1)], [1])
  })
})
