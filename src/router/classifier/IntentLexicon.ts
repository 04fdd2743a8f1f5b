/**
 * Hand-written word classes for the intent of a request (source: written for this project from the task taxonomy's
 * descriptions in `data/task-types.json`, not read off the training corpus). Each class becomes one feature
 * (`cue:<class>` anywhere, `edge:<class>` in the first or last 240 characters), whose weight the training learns
 * like any word's. A class lets a word the corpus never shows (say "limerick") share the evidence of its class
 * ("poem", "story"), and gives the types the corpus lacks (agentic software engineering) words to be found by.
 */

/** Each class with its phrases, as regular-expression alternatives matched on lower-cased text at word bounds. */
export const INTENT_CLASSES: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["creative", ["poems?", "poetry", "haikus?", "sonnets?", "limericks?", "verses?", "rhym\\w*", "lyrics", "songs?",
    "raps?", "(short )?stor(y|ies)", "fairy ?tales?", "fables?", "novels?", "novellas?", "fiction", "fanfic\\w*",
    "screenplays?", "monologues?", "plot twists?", "protagonists?", "villains?", "characters?", "narrat\\w+",
    "bedtime story", "odes?", "ballads?", "sci-?fi", "dragons?", "wizards?", "once upon a time"]],
  ["professional", ["e-?mails?", "cover letters?", "resumes?", "cv", "memos?", "press releases?", "newsletters?",
    "linkedin( post)?", "blog posts?", "product descriptions?", "marketing copy", "slogans?", "taglines?",
    "job (description|posting|ad)s?", "business plans?", "proposals?", "announcements?", "letters? of \\w+",
    "thank[- ]you (note|letter)s?", "speech(es)?", "toasts?", "bios?", "ad copy", "sales pitch", "landing page"]],
  ["edit", ["proofread\\w*", "rewrite", "rephrase", "paraphrase", "reword", "polish", "edit( this)?",
    "grammar", "spelling", "typos?", "more (formal|casual|concise|professional|polite|friendly)",
    "less (formal|wordy)", "simplify", "shorten", "sound (more|less|better)", "tone", "clearer", "improve (this|my)"]],
  ["summarize", ["summar\\w+", "tl;?dr", "condense", "key (points|takeaways)", "main points", "recap", "gist",
    "in a nutshell", "brief overview of (this|the following)"]],
  ["translate", ["translat\\w+", "how (do|would) (you|i) say", "in (english|french|spanish|german|italian|" +
    "portuguese|chinese|japanese|korean|russian|arabic|hindi|dutch|turkish|polish|swedish|vietnamese|thai)",
    "into (english|french|spanish|german|italian|portuguese|chinese|japanese|korean|russian|arabic|hindi|dutch)"]],
  ["proof", ["prove", "proofs?", "show that", "lemma", "theorem", "corollary", "derive", "derivation", "q\\.?e\\.?d",
    "if and only if", "iff", "for all", "there exists", "rigorous\\w*", "by induction", "contradiction"]],
  ["math", ["solve", "equations?", "integrals?", "integrate", "derivatives?", "differentiate", "polynomials?",
    "matri(x|ces)", "eigen\\w+", "probability", "primes?", "integers?", "square roots?", "sqrt", "logarithms?",
    "fractions?", "percent(age)?", "triangles?", "circles?", "radius", "geometry", "algebra\\w*", "calculus",
    "limits?", "sequences?", "series", "factor(ize|ise)?", "divisible", "remainder", "mod", "sum of", "average",
    "how many ways", "combinatorics", "permutations?", "combinations?", "compound interest", "convert \\d+"]],
  ["code", ["code", "function", "script", "program", "implement\\w*", "class", "method", "api", "algorithm",
    "regex", "compile\\w*", "snippet", "library", "variable", "loop", "recursion", "unit tests?", "endpoint"]],
  ["language", ["python", "javascript", "typescript", "java", "c\\+\\+", "c#", "rust", "golang", "go code", "ruby",
    "php", "kotlin", "swift", "scala", "haskell", "perl", "lua", "html", "css", "react", "node(\\.?js)?", "django",
    "flask", "spring", "vue", "angular", "c code", "in c", "r code", "matlab", "dart", "flutter", "elixir"]],
  ["debug", ["errors?", "exceptions?", "traceback", "stack ?trace", "bugs?", "crash\\w*", "fail\\w*", "undefined",
    "segfault", "segmentation fault", "not working", "doesn'?t work", "broken", "debug\\w*", "fix (it|this|my)",
    "wrong output", "throws?", "null pointer", "nullpointerexception", "typeerror", "keyerror", "valueerror"]],
  ["data", ["sql", "query", "queries", "join", "tables?", "select", "group by", "database", "postgres\\w*",
    "mysql", "sqlite", "columns?", "rows?", "pandas", "dataframes?", "csv", "spreadsheet formula", "pivot",
    "aggregate", "schema", "etl", "json"]],
  ["explain_code", ["what does (this|the following) (code|function|script|regex|query)", "explain (this|the) code",
    "code review", "review (my|this) code", "docstrings?", "comments", "document (this|the) code",
    "walk me through", "how does (this|the) code", "time complexity"]],
  ["refactor", ["refactor\\w*", "port (this|it)", "convert (this|it)", "migrate", "rewrite (this|it) in",
    "clean (this|it) up", "optimi[sz]e (this|my)", "rename", "modernize", "to (typescript|python|rust|java|go)"]],
  ["repository", ["repo", "repository", "codebase", "pull requests?", "\\bpr\\b", "github issue", "issue #?\\d+",
    "commits?", "branch", "merge", "ci", "test suite", "failing tests?", "run the tests", "implement the feature",
    "open a pr", "make the tests pass", "across the project"]],
  ["simulation", ["simulat\\w+", "numpy", "scipy", "matplotlib", "monte carlo", "differential equations?", "ode",
    "molecular", "finite (element|difference)", "numerical\\w*", "physics", "particles?", "fft", "array"]],
  ["puzzle", ["puzzles?", "riddles?", "knights?", "knaves?", "liars?", "truth-?tellers?", "sudoku", "brain ?teasers?",
    "deduce", "logic", "logically", "if all", "syllogism", "seating", "who is lying", "tells the truth"]],
  ["science", ["physics", "chemistry", "biology", "molecules?", "electrons?", "enzymes?", "quantum", "thermodynamic\\w*",
    "reactions?", "genes?", "proteins?", "cells?", "atoms?", "force", "velocity", "acceleration", "entropy",
    "wavelength", "photons?", "orbit\\w*", "equilibrium", "reagent", "oxidi[sz]\\w*", "allele\\w*", "mass", "energy"]],
  ["decision", ["should (i|we)", "pros and cons", "trade-?offs?", "which (is|one is|option is) better", "decide",
    "decision", "weigh", "compare", "versus", "vs\\.?", "strategy", "help me (think|choose|decide)",
    "what would you recommend", "is it worth", "risks?"]],
  ["factual", ["who (is|was|wrote|invented|discovered|won)", "when (did|was|is)", "where (is|was)", "what year",
    "capital of", "how tall", "how old", "how far", "which country", "what is the (name|population|capital)",
    "who played", "founded"]],
  ["expert", ["legal\\w*", "laws?", "lawsuit", "contracts?", "tax(es)?", "medical", "diagnos\\w+", "symptoms?",
    "dosage", "dose", "patients?", "treatment", "clinical", "finance", "investment", "stocks?", "accounting",
    "ira", "401k", "mortgage", "regulations?", "compliance", "liability", "prescription", "engineering"]],
  ["tutoring", ["explain", "teach me", "eli5", "like i'?m (five|5|\\d+)", "help me understand", "understand",
    "concepts?", "what is the difference", "how does", "how do .* work", "learn", "lesson", "tutor\\w*",
    "intuition", "beginner", "what does .* mean"]],
  ["tool_action", ["book (me )?(a|an)", "reserve", "reservation", "schedule", "order (me )?(a|an)", "cancel (my|the)",
    "my account", "refund", "check the weather", "weather in", "send (a|an) (message|text|email) to",
    "set (a|an) (reminder|alarm|timer)", "add (a|an)? ?\\w* ?to my calendar", "transfer \\$?\\d+", "track my order",
    "call the", "function call\\w*", "tools?", "look (it )?up"]],
  ["terminal", ["bash", "shell", "terminal", "command line", "command", "cli", "linux", "ubuntu", "debian", "docker",
    "kubernetes", "kubectl", "ssh", "nginx", "systemd", "cron\\w*", "chmod", "chown", "grep", "sudo", "apt(-get)?",
    "brew", "pip install", "deploy\\w*", "server", "directory", "directories", "folders?", "files? (older|larger|bigger)",
    "environment variables?", "permissions", "disk", "processes", "port \\d+"]],
  ["office", ["spreadsheets?", "excel", "slides?", "powerpoint", "slide deck", "presentation", "docx", "xlsx", "pdfs?",
    "word document", "calendar", "meeting invites?", "save (it )?as", "google (docs|sheets|drive)", "my drive",
    "inbox", "attachments?", "invoices?", "fill (in|out) the form"]],
  ["research", ["research", "sources", "cite", "citations?", "literature review", "search the web", "web search",
    "latest", "recent (news|developments|studies)", "with references", "look up", "find out", "as of (today|now)",
    "current state of", "survey of", "report on"]],
  ["document", ["(the|this) (following|attached|above|below|pasted) \\w+", "(the|this) \\w+ (above|below)",
    "based on (the|this) \\w+", "according to (the|this) \\w+", "in the (document|passage|transcript|text)",
    "using only the", "here is (the|a|an|my) \\w+", "here'?s (the|a|an|my) \\w+", "i (have )?pasted",
    "pasted below", "below is", "read (this|the) \\w+ and"]],
  ["many_documents", ["these (documents|reports|papers|articles|files|meetings|transcripts)", "across (all|the|these)",
    "compare the (reports|documents|papers)", "documents? \\d", "paper \\d", "reconcile", "synthesi[sz]e"]],
  ["chat", ["recipes?", "cook\\w*", "bake", "gifts?", "advice", "recommend\\w*", "ideas?", "brainstorm\\w*", "suggest\\w*",
    "tips?", "what should i", "plan a", "trip", "travel", "workout", "birthday", "party",
    "relationship", "hobby", "weekend", "dinner", "vacation", "clean\\w*", "stain", "names? for"]],
  ["classify", ["classify", "classification", "categori[sz]e", "category", "label", "sentiment", "extract\\w*",
    "entities", "named entities", "parse", "fields", "tag each", "spam", "positive or negative", "intent",
    "detect (the )?(language|topic)", "which category"]],
  ["image", ["images?", "pictures?", "photos?", "screenshots?", "charts?", "graphs?", "diagrams?", "figures?",
    "in the image", "attached", "scan(ned)?", "ocr", "what do you see", "this (photo|picture|image)", "plots?",
    "visual\\w*", "uploaded"]],
  ["format", ["exactly \\w+ (words|sentences|paragraphs|bullet points|lines)", "(no|not) more than \\w+ words",
    "at (least|most) \\w+ (words|sentences|paragraphs)", "fewer than \\w+ words", "in (all )?(capital|lowercase|" +
    "uppercase) letters", "all (caps|lowercase)", "do not use (the )?(word|letter|any)", "without using",
    "json (format|object|array)", "respond only with", "only (output|return|respond)", "markdown", "bullet points",
    "numbered list", "end your (response|answer) with", "wrap", "double quotes", "\\d+ (words|sentences)",
    "word count", "no commas", "format"]]
]

const phrasePattern = (phrases: ReadonlyArray<string>, flags: string): RegExp =>
  new RegExp(`(?<![a-z0-9])(?:${phrases.join("|")})(?![a-z0-9])`, flags)

/** The class regular expressions, compiled once; a phrase must not touch an ASCII letter or digit on either side. */
export const INTENT_PATTERNS: ReadonlyArray<readonly [string, RegExp]> = INTENT_CLASSES.map(([name, phrases]) => [
  name,
  phrasePattern(phrases, "y")
])

/** Every phrase of every class in one expression: one scan finds where any phrase starts. */
const ANY_PHRASE = phrasePattern(INTENT_CLASSES.flatMap(([, phrases]) => phrases), "g")

/**
 * The classes found in a lower-cased text. One scan lists the positions where some phrase starts; each class is
 * then tried only there (anchored), which finds exactly the classes a scan per class would, in a third of the time.
 */
export const intentClasses = (text: string): ReadonlyArray<string> => {
  const starts: Array<number> = []
  ANY_PHRASE.lastIndex = 0
  for (let match = ANY_PHRASE.exec(text); match !== null; match = ANY_PHRASE.exec(text)) {
    starts.push(match.index)
    ANY_PHRASE.lastIndex = match.index + 1
  }
  return INTENT_PATTERNS.filter(([, pattern]) =>
    starts.some((start) => {
      pattern.lastIndex = start
      return pattern.test(text)
    })
  ).map(([name]) => name)
}
