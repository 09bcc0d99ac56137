/**
 * An API key's own turn budget (src/assistant/KeyRateLimit.ts) against real actor hosts on the
 * embedded log: a node spends a slice on its own and asks the key's budget actor once a slice,
 * the key's concurrent turns wait for one slice rather than each ask, a spent window refuses with
 * `key_requests` and the seconds to its end without asking again, other keys are not held back,
 * and two hosts deciding the same key admit no more than the budget between them.
 */
import { Effect, Either } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { KeyBudgetActor } from "../../actors/keybudget/actor.ts"
import { makeKeyRateLimiter, type KeyRateLimiterService } from "../../src/assistant/KeyRateLimit.ts"
import { uniqueName } from "../support/env.ts"
import { startActorHost, type TestActorHost } from "../support/host.ts"

const T0 = Date.parse("2026-11-27T12:00:00.000Z")
const hosts: Array<TestActorHost> = []

const start = async (schema?: string) => {
  const started = await startActorHost([KeyBudgetActor], { partitions: 4, ...(schema === undefined ? {} : { schema }) })
  hosts.push(started)
  return started
}

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.stop()
})

const take = (limiter: KeyRateLimiterService, keyId: string, nowMs: number) => Effect.runPromise(Effect.either(limiter.take(keyId, nowMs)))

/** The slices the key's actor handed out, as the log holds them. */
const slicesOf = async (host: TestActorHost, schema: string, keyId: string) =>
  (await host.db.sql`select payload from ${host.db.sql(`${schema}_log.log_events`)} where key = ${`keybudget:${keyId}`} order by seq`).map(
    (row) => (row.payload as { tokens: number }).tokens
  )

describe("one node", () => {
  it("asks once a slice, refuses past the budget with the seconds to the window's end, and starts again with the next window", async () => {
    const schema = uniqueName("t")
    const host = await start(schema)
    const limiter = makeKeyRateLimiter(host.host, { perMinute: 10, slice: 3 })
    for (let i = 0; i < 10; i++) expect(Either.isRight(await take(limiter, "aky_a", T0 + i * 1_000))).toBe(true)
    // four slices: 3 + 3 + 3 + the 1 left
    expect(await slicesOf(host, schema, "aky_a")).toEqual([3, 3, 3, 1])
    const refused = await take(limiter, "aky_a", T0 + 15_000)
    expect(refused).toEqual(Either.left(expect.objectContaining({ _tag: "RateLimited", limit: "key_requests", retryAfterSeconds: 45 })))
    // a refusal is remembered until the window ends: no more asking
    expect(Either.isLeft(await take(limiter, "aky_a", T0 + 59_500))).toBe(true)
    expect(await slicesOf(host, schema, "aky_a")).toEqual([3, 3, 3, 1])
    expect(Either.isRight(await take(limiter, "aky_a", T0 + 60_000))).toBe(true)
    expect(await slicesOf(host, schema, "aky_a")).toEqual([3, 3, 3, 1, 3])
  })

  it("another key has a budget of its own", async () => {
    const host = await start()
    const limiter = makeKeyRateLimiter(host.host, { perMinute: 2, slice: 2 })
    expect(Either.isRight(await take(limiter, "aky_a", T0))).toBe(true)
    expect(Either.isRight(await take(limiter, "aky_a", T0))).toBe(true)
    expect(Either.isLeft(await take(limiter, "aky_a", T0))).toBe(true)
    expect(Either.isRight(await take(limiter, "aky_b", T0))).toBe(true)
  })

  it("the key's concurrent turns share the slice being asked for", async () => {
    const schema = uniqueName("t")
    const host = await start(schema)
    const limiter = makeKeyRateLimiter(host.host, { perMinute: 1_000, slice: 10 })
    const taken = await Promise.all(Array.from({ length: 40 }, () => take(limiter, "aky_a", T0)))
    expect(taken.every(Either.isRight)).toBe(true)
    expect(await slicesOf(host, schema, "aky_a")).toEqual([10, 10, 10, 10])
    // the sweep drops the keys whose window has passed
    expect(Either.isRight(await take(limiter, "aky_b", T0 + 120_000))).toBe(true)
    expect(limiter.size()).toBe(1)
  })
})

describe("two hosts deciding the same key", () => {
  it("admit no more than the budget between them", async () => {
    const schema = uniqueName("t")
    const [a, b] = [await start(schema), await start(schema)]
    const limiters = [makeKeyRateLimiter(a.host, { perMinute: 50, slice: 4 }), makeKeyRateLimiter(b.host, { perMinute: 50, slice: 4 })]
    let admitted = 0
    let refused = 0
    let fenced = 0
    for (let i = 0; i < 160; i++) {
      const limiter = limiters[i % 3 === 0 ? 1 : 0]!
      // a host that decided from a stale state is fenced by the log (503, unavailable): the caller retries
      let result = await take(limiter, "aky_shared", T0 + i * 100)
      for (let retry = 0; retry < 5 && Either.isLeft(result) && result.left._tag === "Unavailable"; retry++) {
        fenced++
        result = await take(limiter, "aky_shared", T0 + i * 100)
      }
      if (Either.isRight(result)) admitted++
      else if (result.left._tag === "RateLimited") refused++
    }
    expect(admitted).toBeLessThanOrEqual(50)
    // each host may be left holding part of a slice it did not spend before the other was refused
    expect(admitted).toBeGreaterThanOrEqual(50 - 2 * 4)
    expect(admitted + refused).toBe(160)
    // both hosts decided the key, each in turn from a state the other had moved on
    expect(fenced).toBeGreaterThan(0)
    const slices = await slicesOf(a, schema, "aky_shared")
    expect(slices.reduce((sum, tokens) => sum + tokens, 0)).toBe(50)
  })
})
