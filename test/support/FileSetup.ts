/**
 * Runs before every test file (vitest `setupFiles`). Test files share their worker's modules (`isolate: false` in
 * vitest.config.ts), and @effect/vitest's `layer(...)` assigns its layer-bound `effect`, `scoped`, `prop`,
 * `flakyTest` and `layer` onto vitest's one shared `it` object: a later file's plain `it.effect` would then run
 * in the earlier file's layer, without the TestClock. This puts back the methods `it` had before any file ran.
 */
import { it } from "@effect/vitest"

const methods = ["effect", "scoped", "live", "scopedLive", "flakyTest", "layer", "prop"] as const

const api = it as unknown as Record<string, unknown>
const registry = globalThis as { __arbiterEffectVitestMethods?: Readonly<Record<string, unknown>> }
// This module is evaluated again before every file; the first evaluation, before any file ran, keeps the originals.
registry.__arbiterEffectVitestMethods ??= Object.fromEntries(methods.map((name) => [name, api[name]]))
Object.assign(api, registry.__arbiterEffectVitestMethods)
