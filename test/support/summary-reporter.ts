/**
 * Prints one plain closing line, `tests: N passed, N failed, N skipped`, that any CI reader
 * understands, after vitest's own summary.
 */
import type { Reporter, TestModule } from "vitest/node"

export default class SummaryReporter implements Reporter {
  async onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    // after the default reporter's summary, so this is the closing line
    await new Promise((resolve) => setTimeout(resolve, 0))
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") passed++
        else if (state === "failed") failed++
        else skipped++
      }
      // a file that failed to load has no tests but is a failure
      if (module.state() === "failed" && [...module.children.allTests()].length === 0) failed++
    }
    console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`)
  }
}
