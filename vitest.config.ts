import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

const shared = {
  globalSetup: ["test/support/globalSetup.ts"],
  setupFiles: ["test/support/FileSetup.ts"],
  testTimeout: 60_000,
  hookTimeout: 120_000,
  pool: "forks" as const,
  // The files of a worker share its loaded modules instead of each loading Effect and the service again (seconds
  // per file); each file still gets a database and a server of its own. test/support/FileSetup.ts undoes the one
  // thing a file leaves behind in a shared module. (The worker process itself is reused only by the root's
  // `isolate: false` below.)
  isolate: false
}

// Two projects: the suite, files in parallel; then the files named `*.solo.test.ts`, one at a time with nothing else
// running, because they measure the service's responsiveness (a parallel test file would stall the machine).
export default defineConfig({
  test: {
    // At least two workers, even on two cores: test files spend much of their time waiting on sockets and timers.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    minWorkers: 1,
    // Worker reuse is decided here, by the one pool both projects share (vitest 3.2 builds the pool from the root
    // options and ignores a project's `isolate` for it): without this, every file gets a fresh process that loads
    // Effect and the service again, about a second per file.
    isolate: false,
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
