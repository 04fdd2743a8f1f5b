/**
 * `node --import tsx bench/router-examples.ts`: the selections of a few prompts with the built-in model (the default
 * install, on the embedded database): each prompt's classified domain and task type with their probabilities, the
 * `non_english` facet, `low_confidence` and the chosen model under `balanced`, and `low_confidence` and the model under
 * `domain_skills` (the one policy whose `low_confidence` can be true: its top task type under 40%). The prompts are the examples of the router's model
 * card (`docs/router-classifier.md`): a Chinese olympiad problem, a Japanese request for a Python script, a riddle,
 * a podcast script, and a pasted stack trace asking why it fails.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startNode } from "./support/Processes.js"

const TRACE = `Traceback (most recent call last):
  File "/srv/shop/app.py", line 41, in checkout
    total = sum(item["price"] * item["qty"] for item in cart.items)
  File "/srv/shop/app.py", line 41, in <genexpr>
    total = sum(item["price"] * item["qty"] for item in cart.items)
TypeError: can't multiply sequence by non-int of type 'str'`

const PROMPTS: ReadonlyArray<readonly [string, string]> = [
  ["Chinese maths olympiad problem", "设正整数a,b,c满足a+b+c=2024，且a,b,c两两互素。求abc的最大可能值，并证明你的结论。"],
  ["Japanese request for a Python script", "Pythonで、フォルダ内の画像を撮影日ごとのフォルダに振り分けるスクリプトを書いてください。"],
  ["riddle", "What has hands but can't clap?"],
  ["podcast script", "Can you write a script for the first episode of my podcast about urban gardening? Two hosts, about 10 minutes, friendly tone."],
  ["pasted stack trace", `${TRACE}\n\nwhy does this fail`]
]

const main = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "arbiter-examples-"))
  const env = { DATA_DIR: dataDir, BILLING_PROVIDER: "local", LOG_LEVEL: "warn" }
  try {
    const created = execFileSync(process.execPath, [
      "--import", "tsx", "src/cli.ts", "org", "create", "--name", "examples", "--owner-email", "examples@example.com"
    ], { env: { ...process.env, ...env }, encoding: "utf8" })
    const secret = JSON.parse(created).key.secret
    const service = await startNode("src/main.ts", env, "/readyz")
    try {
      const select = async (prompt: string, policy: string) => {
        const response = await fetch(`${service.url}/v1/router/select`, {
          method: "POST",
          headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
          body: JSON.stringify({ prompt, policy })
        })
        return { status: response.status, selection: (await response.json()) as any }
      }
      for (const [name, prompt] of PROMPTS) {
        const { selection, status } = await select(prompt, "balanced")
        const skills = await select(prompt, "domain_skills")
        const { classification: c } = selection
        const domain = c.domain.label
        const top = c.task_type.top.slice(0, 3).map((t: any) => `${t.label} ${t.probability.toFixed(2)}`).join(", ")
        console.log(`## ${name} (HTTP ${status}, ${skills.status})\n${prompt.replace(/\n/g, "\n  ").slice(0, 400)}`)
        console.log(`  domain ${domain} ${c.domain.probabilities[domain].toFixed(2)}; task types ${top}`)
        console.log(`  difficulty ${c.difficulty.label}; non_english ${c.facets.non_english.toFixed(2)}; needs_code_output ${c.facets.needs_code_output.toFixed(2)}`)
        console.log(`  balanced: low_confidence ${selection.low_confidence}; model ${selection.model.id}\n  reason: ${selection.reason}`)
        console.log(`  domain_skills: low_confidence ${skills.selection.low_confidence}; model ${skills.selection.model.id}\n`)
      }
    } finally {
      await service.stop()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
