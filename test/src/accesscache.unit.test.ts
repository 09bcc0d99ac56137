/**
 * The access cache on its own: a miss is looked up once however many callers ask at the same
 * time, a failure is shared by those callers and not kept, and an invalidation during a lookup
 * keeps its answer out of the cache and later callers out of the lookup. An entry in use is renewed
 * in the background before it expires.
 */
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { ACCESS_TTL_MS, make } from "../../src/checkpoint/AccessCache.ts"

/** A lookup the test finishes when it likes, counting how often it was started. */
const gate = <A>() => {
  let started = 0
  let finish: (outcome: Either.Either<A, Error>) => void = () => {}
  const load = () => {
    started++
    return new Promise<A>((resolve, reject) => {
      finish = (outcome) => (Either.isRight(outcome) ? resolve(outcome.right) : reject(outcome.left))
    })
  }
  return { load, started: () => started, finish: (outcome: Either.Either<A, Error>) => finish(outcome) }
}

const owned = (orgId: string) => () => ({ orgId, credentialId: null })

describe("access cache", () => {
  it("looks a cold key up once for 50 concurrent callers, then answers from memory", async () => {
    const cache = make()
    const lookup = gate<string>()
    const ask = () => Effect.runPromise(cache.lookup("places", "acme\nmain", "find workspace", lookup.load, owned("org_1")))
    const callers = Array.from({ length: 50 }, ask)
    await new Promise((resolve) => setImmediate(resolve))
    lookup.finish(Either.right("org_1/wsp_1"))
    expect(await Promise.all(callers)).toEqual(Array(50).fill("org_1/wsp_1"))
    expect(await ask()).toBe("org_1/wsp_1")
    expect(lookup.started()).toBe(1)
  })

  it("gives a failed lookup's error to every caller waiting for it and keeps nothing", async () => {
    const cache = make()
    const lookup = gate<string>()
    const ask = () => Effect.runPromise(Effect.either(cache.lookup("slugs", "org_2\n", "name workspace", lookup.load, owned("org_2"))))
    const callers = Array.from({ length: 10 }, ask)
    await new Promise((resolve) => setImmediate(resolve))
    lookup.finish(Either.left(new Error("connection reset")))
    for (const outcome of await Promise.all(callers)) {
      expect(outcome).toMatchObject({ _tag: "Left", left: { _tag: "DbError", message: "name workspace: Error: connection reset" } })
    }
    const retry = ask()
    await new Promise((resolve) => setImmediate(resolve))
    lookup.finish(Either.right("acme"))
    expect(await retry).toEqual(Either.right("acme"))
    expect(lookup.started()).toBe(2)
  })

  it("does not keep nothing-found, so what was created a moment ago is seen at once", async () => {
    const cache = make()
    let row: string | undefined
    let started = 0
    const ask = () =>
      Effect.runPromise(cache.lookup("keys", "lookup-1", "find api key", async () => {
        started++
        return row
      }, (found) => (found === undefined ? undefined : { orgId: "org_3", credentialId: "aky_1" })))
    expect(await ask()).toBeUndefined()
    row = "aky_1"
    expect(await ask()).toBe("aky_1")
    expect(await ask()).toBe("aky_1")
    expect(started).toBe(2)
  })

  it("serves an answer fetched across an invalidation once, and lets later callers look again", async () => {
    const cache = make()
    const first = gate<string>()
    const second = gate<string>()
    let lookups = 0
    const load = () => (lookups++ === 0 ? first.load() : second.load())
    const ask = () => Effect.runPromise(cache.lookup("facts", "org_4\nwsp\nusr\n", "access facts", load, owned("org_4")))
    const before = ask()
    await new Promise((resolve) => setImmediate(resolve))
    cache.invalidateOrg("org_4")
    // started after the change: it must not take the answer of a query that began before it
    const after = ask()
    await new Promise((resolve) => setImmediate(resolve))
    first.finish(Either.right("member"))
    second.finish(Either.right("owner"))
    expect(await before).toBe("member")
    expect(await after).toBe("owner")
    expect(await ask()).toBe("owner")
    expect(lookups).toBe(2)
  })

  it("renews an entry used in the second half of its life in the background, answering from memory meanwhile", async () => {
    const cache = make()
    const lookup = gate<string>()
    const ask = () => Effect.runPromise(cache.lookup("roles", "org_5\nauditor\nworkspace", "custom role", lookup.load, owned("org_5")))
    const first = ask()
    await new Promise((resolve) => setImmediate(resolve))
    lookup.finish(Either.right("workspace:viewer"))
    expect(await first).toBe("workspace:viewer")
    await new Promise((resolve) => setTimeout(resolve, ACCESS_TTL_MS / 2 + 50))
    // answered at once from the entry while its renewal is in flight
    expect(await ask()).toBe("workspace:viewer")
    expect(await ask()).toBe("workspace:viewer")
    expect(lookup.started()).toBe(2)
    lookup.finish(Either.right("workspace:member"))
    await new Promise((resolve) => setImmediate(resolve))
    expect(await ask()).toBe("workspace:member")
    expect(lookup.started()).toBe(2)
  })
})
