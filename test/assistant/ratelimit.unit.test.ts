/**
 * The per-workspace chat limiter: a token bucket of `perMinute` requests refilling `perMinute`
 * every 60 s; a refusal says when the next request passes; workspaces do not share buckets; idle
 * buckets, full again, are dropped.
 */
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../../src/platform/Config.ts"
import { ChatRateLimiter, chatRateLimiterLayer, makeChatRateLimiter } from "../../src/assistant/RateLimit.ts"
import { RateLimited } from "../../src/platform/Errors.ts"
import { AssistantSettings } from "../../src/assistant/Settings.ts"

const T0 = Date.parse("2024-05-01T12:00:00.000Z")

describe("chat rate limiter", () => {
  it("lets a minute's worth through at once, then refuses with the seconds until one is back", () => {
    const limiter = makeChatRateLimiter(3)
    for (let i = 0; i < 3; i++) expect(limiter.take("wsp_1", T0)).toEqual({ ok: true })
    expect(limiter.take("wsp_1", T0)).toEqual({ ok: false, retryAfterSeconds: 20 })
    expect(limiter.take("wsp_1", T0 + 15_000)).toEqual({ ok: false, retryAfterSeconds: 5 })
    expect(limiter.take("wsp_1", T0 + 19_001)).toEqual({ ok: false, retryAfterSeconds: 1 })
    expect(limiter.take("wsp_1", T0 + 20_000)).toEqual({ ok: true })
    expect(limiter.take("wsp_1", T0 + 20_000).ok).toBe(false)
  })

  it("refills at the rate, never beyond the minute's capacity", () => {
    const limiter = makeChatRateLimiter(60)
    for (let i = 0; i < 60; i++) expect(limiter.take("wsp_1", T0).ok).toBe(true)
    expect(limiter.take("wsp_1", T0).ok).toBe(false)
    // one a second
    expect(limiter.take("wsp_1", T0 + 1_000).ok).toBe(true)
    expect(limiter.take("wsp_1", T0 + 1_500)).toEqual({ ok: false, retryAfterSeconds: 1 })
    // an hour idle gives back one minute's worth, not sixty
    let passed = 0
    while (limiter.take("wsp_1", T0 + 3_600_000).ok) passed++
    expect(passed).toBe(60)
  })

  it("keeps one bucket per workspace", () => {
    const limiter = makeChatRateLimiter(1)
    expect(limiter.take("wsp_1", T0).ok).toBe(true)
    expect(limiter.take("wsp_1", T0).ok).toBe(false)
    expect(limiter.take("wsp_2", T0).ok).toBe(true)
  })

  it("a refused request costs nothing, and a clock stepping back refills nothing", () => {
    const limiter = makeChatRateLimiter(2)
    limiter.take("wsp_1", T0)
    limiter.take("wsp_1", T0)
    for (let i = 0; i < 10; i++) expect(limiter.take("wsp_1", T0 + 10_000).ok).toBe(false)
    expect(limiter.take("wsp_1", T0 + 30_000).ok).toBe(true)
    expect(limiter.take("wsp_1", T0 - 60_000).ok).toBe(false)
  })

  it("drops buckets that are full again, so memory follows the workspaces active in the last minute", () => {
    const limiter = makeChatRateLimiter(10)
    for (let i = 0; i < 1_000; i++) limiter.take(`wsp_${i}`, T0)
    expect(limiter.size()).toBe(1_000)
    // a busy workspace keeps its bucket: it is not full
    for (let i = 0; i < 10; i++) limiter.take("busy", T0 + 59_000)
    limiter.take("wsp_new", T0 + 60_000)
    expect(limiter.size()).toBe(2)
    expect(limiter.take("busy", T0 + 60_000).ok).toBe(false)
  })

  it("refuses a rate that is not a positive whole number", () => {
    expect(() => makeChatRateLimiter(0)).toThrow(/positive integer/)
    expect(() => makeChatRateLimiter(1.5)).toThrow(/positive integer/)
  })

  it("the process's limiter takes its rate from the assistant settings (120 a minute by default)", async () => {
    const settings = loadConfig({}).assistant
    expect(settings.chatRateLimitPerMinute).toBe(120)
    const limiter = await Effect.runPromise(
      Effect.provide(ChatRateLimiter, chatRateLimiterLayer.pipe(Layer.provide(Layer.succeed(AssistantSettings, { ...settings, chatRateLimitPerMinute: 2 }))))
    )
    expect(limiter.take("wsp_1", T0).ok).toBe(true)
    expect(limiter.take("wsp_1", T0).ok).toBe(true)
    expect(limiter.take("wsp_1", T0)).toEqual({ ok: false, retryAfterSeconds: 30 })
  })

  it("RateLimited carries the seconds the gateway sends as Retry-After", () => {
    const error = new RateLimited({ retryAfterSeconds: 7 })
    expect(error._tag).toBe("RateLimited")
    expect(error.retryAfterSeconds).toBe(7)
    expect(error.message).toMatch(/7 s/)
  })
})
