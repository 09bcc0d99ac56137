/**
 * Fair shares on their own (src/platform/FairShares.ts): a key's and a workspace's bounds on streams and on
 * turns, each counted apart; the refusal (429 `rate_limited` with the seconds to wait, and which
 * bound it was); a share given back once, however often its release is called.
 */
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { makeFairShares, SHARE_RETRY_AFTER_SECONDS } from "../../src/platform/FairShares.ts"

const shares = () =>
  makeFairShares({ streamsPerKey: 2, streamsPerWorkspace: 3, turnsPerKey: 1, turnsPerWorkspace: 5, enabledSchedulesPerWorkspace: 10 })

const take = (service: ReturnType<typeof shares>, share: "stream" | "turn", key: string, workspaceId = "wsp_a") =>
  Effect.runSync(Effect.either(service.take(share, { key, workspaceId })))

describe("fair shares", () => {
  it("a key holds at most its share, and a share given back is free again, once", () => {
    const service = shares()
    const first = take(service, "stream", "aky_1")
    expect(Either.isRight(take(service, "stream", "aky_1"))).toBe(true)
    const refused = take(service, "stream", "aky_1")
    expect(Either.isLeft(refused) && refused.left).toMatchObject({ _tag: "RateLimited", limit: "streams_per_key", retryAfterSeconds: SHARE_RETRY_AFTER_SECONDS })
    if (Either.isLeft(first)) throw new Error("the first stream was refused")
    first.right()
    first.right()
    expect(Either.isRight(take(service, "stream", "aky_1"))).toBe(true)
    // given back twice, freed once: the key is at its share again
    expect(Either.isLeft(take(service, "stream", "aky_1"))).toBe(true)
  })

  it("a workspace holds at most its share, whatever its keys; another workspace is untouched", () => {
    const service = shares()
    for (const key of ["aky_1", "aky_1", "aky_2"]) expect(Either.isRight(take(service, "stream", key))).toBe(true)
    const refused = take(service, "stream", "aky_3")
    expect(Either.isLeft(refused) && refused.left.limit).toBe("streams_per_workspace")
    expect(Either.isRight(take(service, "stream", "aky_3", "wsp_b"))).toBe(true)
  })

  it("turns are counted apart from streams", () => {
    const service = shares()
    expect(Either.isRight(take(service, "turn", "aky_1"))).toBe(true)
    const refused = take(service, "turn", "aky_1")
    expect(Either.isLeft(refused) && refused.left.limit).toBe("turns_per_key")
    expect(Either.isRight(take(service, "stream", "aky_1"))).toBe(true)
  })
})
