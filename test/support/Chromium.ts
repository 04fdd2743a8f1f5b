/**
 * A headless Chromium for the tests that drive a page as a person would (playwright-core over Debian's `chromium`):
 * `CHROMIUM_PATH`, else `chromium` (or `chromium-browser`) on the PATH. Without one such a test is skipped with the
 * reason, except under `CI=true`, where it fails.
 */
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { delimiter, join } from "node:path"
import { type Browser, chromium } from "playwright-core"

const onPath = (names: ReadonlyArray<string>) =>
  (process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== "").flatMap((dir) => names.map((name) => join(dir, name)))
    .find((path) => existsSync(path))

/** Where Chromium is looked for. */
export const ChromiumPath = process.env.CHROMIUM_PATH ?? onPath(["chromium", "chromium-browser"]) ?? "/usr/bin/chromium"

/** True when a browser test should be skipped rather than run: no Chromium, and not under `CI=true`. */
export const skipWithoutChromium = !existsSync(ChromiumPath) && process.env.CI !== "true"

/** The one-line reason a browser test is skipped. */
export const ChromiumMissing =
  `no Chromium at ${ChromiumPath} (apt-get install chromium, or set CHROMIUM_PATH); CI=true fails instead`

/** Runs `use` with a fresh headless browser, closed afterwards. */
export const withBrowser = <A>(use: (browser: Browser) => Promise<A>) =>
  Effect.acquireUseRelease(
    Effect.promise(() =>
      chromium.launch({
        executablePath: ChromiumPath,
        args: [
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync"
        ]
      })
    ),
    (browser) => Effect.promise(() => use(browser)),
    (browser) => Effect.promise(() => browser.close())
  )
