import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { dependencyRetry } from "../../streams/Backoff.ts"
import { DbError } from "../../streams/Db.ts"

/** Milliseconds a loop takes to get through `failures` failures, each made by `error`, on the dependency backoff. */
const through = (failures: number, error: () => DbError) =>
  Effect.gen(function* () {
    let tries = 0
    const began = performance.now()
    yield* Effect.suspend(() => (++tries <= failures ? Effect.fail(error()) : Effect.void)).pipe(Effect.retry(dependencyRetry))
    return performance.now() - began
  })

const lost = () => new DbError({ message: "apply batch: Error: write CONNECTION_CLOSED", cause: Object.assign(new Error("write CONNECTION_CLOSED"), { code: "CONNECTION_CLOSED" }) })
const refused = () => new DbError({ message: "apply batch: Error: connect ECONNREFUSED", cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) })

describe("the dependency backoff", () => {
  it.live("starts again from its first step after each lost connection, and grows while connects are refused", () =>
    Effect.gen(function* () {
      // five lost connections: five first steps (100 ms, jittered); five refusals: 100, 200, 400, 800 and 1,000 ms (jittered)
      expect(yield* through(5, lost)).toBeLessThan(1_000)
      expect(yield* through(5, refused)).toBeGreaterThan(1_800)
    }), 10_000)
})
