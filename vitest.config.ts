import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // integration suites share one Postgres and one broker; files run one after another
    fileParallelism: false,
    pool: "forks",
    reporters: ["default", "./test/support/summary-reporter.ts"]
  }
})
