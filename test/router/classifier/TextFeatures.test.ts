/**
 * What the classifier reads of a prompt: the excerpt's omission line comes out with the task's real length put
 * back, features are the same for the same text, and the signals see what a prompt is made of (scripts and
 * languages, stack traces, SQL, code fences, tool schemas, intent classes).
 */
import { assert, describe, it } from "@effect/vitest"
import { intentClasses } from "../../../src/router/classifier/IntentLexicon.js"
import { languageSignals } from "../../../src/router/classifier/LanguageSignals.js"
import { promptTextOfState, promptTextOfTask } from "../../../src/router/classifier/PromptText.js"
import { promptFeatures, wordsOf } from "../../../src/router/classifier/TextFeatures.js"
import { structureSignals } from "../../../src/router/classifier/TextStructure.js"
import { HEAD_CHARS, promptExcerpt, TAIL_CHARS } from "../../../src/router/classification/PromptExcerpt.js"

const language = (text: string) => languageSignals(text, wordsOf(text.toLowerCase()))

describe("PromptText", () => {
  it("a short task is read whole", () => {
    assert.deepStrictEqual(promptTextOfState("Write a haiku"), { text: "Write a haiku", totalChars: 13, omitted: false })
  })

  it("a long task's excerpt loses its omission line and keeps the task's length", () => {
    const task = "START " + "x".repeat(20_000) + " END"
    const read = promptTextOfState(promptExcerpt(task))
    assert.strictEqual(read.totalChars, task.length)
    assert.isTrue(read.omitted)
    assert.notInclude(read.text, "characters of the task omitted")
    assert.isTrue(read.text.startsWith("START "))
    assert.isTrue(read.text.endsWith(" END"))
    assert.strictEqual(read.text.length, HEAD_CHARS + TAIL_CHARS + 2)
    assert.deepStrictEqual(promptTextOfTask(task), read)
  })
})

describe("features", () => {
  it("are the same for the same text and name words, word pairs and signals", () => {
    const prompt = promptTextOfTask("Write a Python function that reverses a string")
    const features = promptFeatures(prompt)
    assert.deepStrictEqual(promptFeatures(prompt), features)
    assert.include(features.lexical, "w:python")
    assert.include(features.lexical, "b:python function")
    assert.include(features.signals, "s:cue:code")
    assert.include(features.signals, "s:cue:language")
    assert.include(features.signals, "s:verb:write")
    assert.notInclude(features.signals, "s:len:s")
    assert.include(features.structure, "lines:1")
  })

  it("numbers read as # and unspaced scripts as character pairs", () => {
    const features = promptFeatures(promptTextOfTask("请帮我 2024"))
    assert.include(features.lexical, "w:#")
    assert.include(features.lexical, "c:请帮")
    assert.strictEqual(features.language.script, "han")
  })

  it("the language is detected but is not a feature: the task decides the family in any language", () => {
    for (const text of ["请帮我写一个函数", "Pythonでスクリプトを書いてください", "Écris une fonction qui trie une liste"]) {
      const features = promptFeatures(promptTextOfTask(text))
      assert.isAbove(features.language.nonEnglish, 0.5, text)
      assert.isFalse(features.signals.some((name) => /^s:(script|lang|non_english)/.test(name)), text)
    }
  })

  it("Japanese endings and particles (hiragana alone, or two together) are not features; kanji and katakana are", () => {
    const features = promptFeatures(promptTextOfTask("スクリプトを書いてください"))
    assert.include(features.lexical, "c:ス")
    assert.include(features.lexical, "c:書い")
    assert.notInclude(features.lexical, "c:さ")
    assert.notInclude(features.lexical, "c:くだ")
    assert.notInclude(features.lexical, "c:ださ")
  })

  it("other languages' function words are not features, alone or two together; the words around them are", () => {
    const features = promptFeatures(promptTextOfTask("Fass mir diesen Artikel bitte in drei Sätzen zusammen, und der Ton ist mir wichtig"))
    for (const name of ["w:artikel", "w:zusammen", "b:zusammen und"]) assert.include(features.lexical, name)
    for (const name of ["w:und", "w:der", "b:und der"]) assert.notInclude(features.lexical, name)
    const english = promptFeatures(promptTextOfTask("Is this the one that will die in the end?"))
    for (const word of ["the", "this", "will", "die", "in"]) assert.include(english.lexical, `w:${word}`)
  })

  it("long words also count by their stem, so forms training did not see share it", () => {
    const one = promptFeatures(promptTextOfTask("Zusammenfassung des Berichts"))
    const other = promptFeatures(promptTextOfTask("bitte zusammenfassen"))
    assert.include(one.lexical, "p:zusam")
    assert.include(other.lexical, "p:zusam")
    assert.isFalse(promptFeatures(promptTextOfTask("write a short poem")).lexical.some((name) => name.startsWith("p:")))
  })

  it("Korean words also count by their character pairs: a word carries its particles", () => {
    const one = promptFeatures(promptTextOfTask("자기소개서를 써 주세요"))
    const other = promptFeatures(promptTextOfTask("자기소개서에서 지원 동기"))
    for (const pair of ["c:자기", "c:소개", "c:개서"]) {
      assert.include(one.lexical, pair)
      assert.include(other.lexical, pair)
    }
  })
})

describe("language signals", () => {
  it("tell English, French, German, Chinese and Russian apart", () => {
    assert.isBelow(language("How do I sort a list of numbers in Python?").nonEnglish, 0.5)
    const french = language("Quelle est la différence entre un virus et une bactérie ?")
    assert.strictEqual(french.latinLanguage, "fr")
    assert.isTrue(french.latinDominant)
    assert.isAbove(french.nonEnglish, 0.5)
    assert.strictEqual(language("Wie viele Einwohner hat Berlin und wie groß ist die Stadt?").latinLanguage, "de")
    assert.strictEqual(language("请帮我写一封感谢信").script, "han")
    assert.strictEqual(language("Как приготовить борщ?").script, "cyrillic")
  })

  it("know a short German or Spanish question by its question and modal words", () => {
    assert.isAbove(language("Welche Sehenswürdigkeiten sollte ich in Wien an einem Tag besuchen?").nonEnglish, 0.5)
    assert.isAbove(language("¿Dónde hay un buen sitio para cenar cuando llueve?").nonEnglish, 0.5)
    assert.isBelow(language("What is the best way to learn German?").nonEnglish, 0.5)
  })

  it("a translation request with a quoted foreign sentence is English with another language in it", () => {
    const mixed = language("Can you translate this into English for me? 'Ich habe morgen keine Zeit, aber vielleicht am Wochenende.'")
    assert.isFalse(mixed.latinDominant)
    assert.isBelow(mixed.nonEnglish, 0.5)
  })
})

describe("structure signals and intent classes", () => {
  it("see stack traces, SQL, fenced code and tool schemas", () => {
    assert.include(structureSignals("Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\nKeyError: 'x'"), "trace")
    assert.include(structureSignals("SELECT name FROM users WHERE id = 3"), "sql")
    assert.includeMembers([...structureSignals("```python\ndef f(x):\n    return x\n```")], ["fence", "fence:python"])
    assert.include(structureSignals('[{"name": "get_weather", "parameters": {"type": "object"}}]'), "toolschema")
    assert.include(structureSignals("what is 15% of 240"), "arithmetic")
    assert.notInclude(structureSignals("Write a haiku about autumn leaves"), "arithmetic")
  })

  it("find the intent of common requests", () => {
    assert.include(intentClasses("write a haiku about autumn leaves"), "creative")
    assert.include(intentClasses("translate this to french"), "translate")
    assert.include(intentClasses("prove that sqrt 2 is irrational"), "proof")
    assert.include(intentClasses("open a pull request that fixes the failing tests in the repo"), "repository")
    assert.notInclude(intentClasses("write a haiku about autumn leaves"), "code")
  })

  it("keep everyday senses of code and system words apart from code and terminal work", () => {
    const article = intentClasses("the plan turns the old shipping terminal into a public library and a clinic")
    assert.includeMembers([...article], ["code_word", "terminal_word"])
    assert.notInclude(article, "code")
    assert.notInclude(article, "terminal")
    assert.include(intentClasses("write a bash command to list the files"), "terminal")
  })

  it("read role-play, a media script, everyday expert questions and riddles by their shape", () => {
    const game = intentClasses("let's play a game: you're a grumpy innkeeper and i'm a traveler")
    assert.include(game, "roleplay")
    assert.notInclude(game, "creative")
    assert.include(intentClasses("write the script for a 60-second tiktok about cats"), "creative")
    assert.include(intentClasses("is it safe to take ibuprofen with a fever?"), "expert")
    assert.include(intentClasses("my landlord kept my deposit, is that legal?"), "expert")
    assert.include(intentClasses("what gets wetter the more it dries"), "puzzle")
    assert.include(intentClasses("exactly one of them is lying. who took the cake?"), "puzzle")
    assert.include(intentClasses("三人中只有一个人说了真话"), "puzzle")
    assert.include(intentClasses("in the dark, how many socks must he take to be sure of a pair?"), "puzzle")
    assert.include(intentClasses("you are a tour guide in old kyoto. greet me and show me around"), "roleplay")
    assert.notInclude(intentClasses("what is the oldest university in the world?"), "puzzle")
    assert.include(intentClasses("子どもが発熱したら何科を受診すればいいですか"), "expert")
    assert.include(intentClasses("¿puedo tomar ibuprofeno con fiebre?"), "expert")
    assert.notInclude(intentClasses("what can i do about it?"), "puzzle")
    assert.notInclude(intentClasses("my plants keep dying, what am i doing wrong?"), "puzzle")
    assert.notInclude(intentClasses("how should i prepare for my first marathon?"), "decision")
    assert.include(intentClasses("should i take the job?"), "decision")
    assert.notInclude(intentClasses("源氏物語の作者は誰ですか？"), "creative")
  })

  it("find a question's intent in other languages", () => {
    assert.include(intentClasses("なぜ空は青いのですか？"), "tutoring")
    assert.include(intentClasses("头疼应该吃什么药？"), "expert")
    assert.include(intentClasses("요즘 스트레스가 너무 많아요"), "chat")
    assert.include(intentClasses("montrer que toute suite convergente est bornée"), "proof")
  })
})
