import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    setupFiles: ["test/support/FileSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // The files of a worker share its loaded modules instead of each loading Effect and the service again (seconds
    // per file); each file still gets a database and a server of its own. test/support/FileSetup.ts undoes the one
    // thing a file leaves behind in a shared module.
    isolate: false,
    // At least two workers, even on two cores: test files spend much of their time waiting on sockets and timers.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    minWorkers: 1
  }
})
