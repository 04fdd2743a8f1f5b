import { defineConfig } from "vitest/config"

const shared = {
  globalSetup: ["test/support/globalSetup.ts"],
  testTimeout: 60_000,
  hookTimeout: 120_000
}

// Two projects: the suite, files in parallel; then the files named `*.solo.test.ts`, one at a time with nothing else
// running, because they measure the service's responsiveness (a parallel test file would stall the machine).
export default defineConfig({
  test: {
    projects: [
      { test: { ...shared, name: "suite", include: ["test/**/*.test.ts"], exclude: ["test/**/*.solo.test.ts"] } },
      {
        test: {
          ...shared,
          name: "solo",
          include: ["test/**/*.solo.test.ts"],
          poolOptions: { forks: { singleFork: true } },
          sequence: { groupOrder: 1 }
        }
      }
    ]
  }
})
