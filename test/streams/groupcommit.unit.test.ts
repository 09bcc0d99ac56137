import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import * as GroupCommit from "../../streams/GroupCommit.ts"

describe("GroupCommit", () => {
  it.scoped("commits a lone item at once, and what arrives during a commit together in the next one", () =>
    Effect.gen(function* () {
      const commits: Array<ReadonlyArray<number>> = []
      const gate = yield* Deferred.make<void>()
      const committer = yield* GroupCommit.make({
        maxItems: 10,
        commit: (items: ReadonlyArray<number>) =>
          Effect.gen(function* () {
            commits.push(items)
            if (commits.length === 1) yield* Deferred.await(gate)
            return items.map((n) => n * 10)
          })
      })
      const first = yield* Effect.fork(committer.submit(1))
      yield* Effect.yieldNow()
      const rest = yield* Effect.fork(Effect.all([2, 3, 4].map(committer.submit), { concurrency: "unbounded" }))
      yield* Effect.yieldNow()
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(first)).toBe(10)
      expect(yield* Fiber.join(rest)).toEqual([20, 30, 40])
      expect(commits).toEqual([[1], [2, 3, 4]])
    }))

  it.scopedLive("fails every item of a failed commit, and goes on with the next", () =>
    Effect.gen(function* () {
      let calls = 0
      const committer = yield* GroupCommit.make({
        maxItems: 10,
        windowMs: 5,
        commit: (items: ReadonlyArray<string>) => (++calls === 1 ? Effect.fail("disk full") : Effect.succeed(items))
      })
      const failed = yield* Effect.all(["a", "b"].map((s) => Effect.exit(committer.submit(s))), { concurrency: "unbounded" })
      expect(failed).toEqual([Exit.fail("disk full"), Exit.fail("disk full")])
      expect(yield* committer.submit("c")).toBe("c")
    }))

  it.scopedLive("keeps a commit within maxItems and what fits", () =>
    Effect.gen(function* () {
      const commits: Array<ReadonlyArray<number>> = []
      const committer = yield* GroupCommit.make({
        maxItems: 3,
        windowMs: 5,
        fits: (taken: ReadonlyArray<number>, next: number) => taken.reduce((a, b) => a + b, 0) + next <= 10,
        commit: (items: ReadonlyArray<number>) => Effect.sync(() => (commits.push(items), items))
      })
      yield* Effect.all([1, 1, 1, 1, 9, 2].map(committer.submit), { concurrency: "unbounded" })
      expect(commits).toEqual([[1, 1, 1], [1, 9], [2]])
    }))

  it.effect("closing answers what waits at once: the commit in flight, what is queued, and what comes after", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const never = yield* Deferred.make<void>()
      const committer = yield* GroupCommit.make({
        maxItems: 1,
        // a commit that never answers: a broker gone quiet, a writer whose partition changed hands
        commit: (items: ReadonlyArray<string>) => Effect.as(Deferred.await(never), items),
        closed: () => "closed"
      }).pipe(Scope.extend(scope))
      const inFlight = yield* Effect.fork(Effect.exit(committer.submit("a")))
      yield* Effect.yieldNow()
      const queued = yield* Effect.fork(Effect.exit(committer.submit("b")))
      yield* Effect.yieldNow()
      yield* Scope.close(scope, Exit.void)
      expect(yield* Fiber.join(inFlight)).toEqual(Exit.fail("closed"))
      expect(yield* Fiber.join(queued)).toEqual(Exit.fail("closed"))
      expect(yield* Effect.exit(committer.submit("c"))).toEqual(Exit.fail("closed"))
    }))
})
