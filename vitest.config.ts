import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

const shared = {
  globalSetup: ["test/support/globalSetup.ts"],
  testTimeout: 60_000,
  hookTimeout: 120_000,
  pool: "forks" as const,
  // A worker process runs file after file and its files share its loaded modules, instead of each file starting a
  // process that loads Effect and the service again (seconds per file); each file still gets a database and a server
  // of its own. The pool reuses a worker for the next file of the same project only when the project is not isolated.
  isolate: false
}

// Two projects: the suite, files in parallel; then the files named `*.solo.test.ts`, one at a time in one worker with
// nothing else running (a later `sequence.groupOrder` starts once the earlier group is done), because they measure
// the service's responsiveness (a parallel test file would stall the machine).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: "suite",
          include: ["test/**/*.test.ts"],
          exclude: ["test/**/*.solo.test.ts"],
          // At least two workers, even on two cores: test files spend much of their time waiting on sockets and
          // timers.
          maxWorkers: Math.max(2, availableParallelism() - 1)
        }
      },
      {
        test: {
          ...shared,
          name: "solo",
          include: ["test/**/*.solo.test.ts"],
          maxWorkers: 1,
          sequence: { groupOrder: 1 }
        }
      }
    ]
  }
})
