/**
 * How many chat requests (stream and ask alike, and A2A sends) a workspace's people may start (an
 * API key's turns take from its own budget instead, src/assistant/KeyRateLimit.ts): a token bucket per
 * workspace holding `perMinute` requests and refilling `perMinute` every 60 seconds, so a burst
 * of a minute's worth passes and a steady stream above the rate waits. The count is per process
 * (docs/decisions.md): a cluster of n nodes lets a workspace through up to n times the rate.
 */
import { Context, Effect, Layer } from "effect"
import { retryAfterSeconds } from "../platform/Errors.ts"
import { AssistantSettings } from "./Settings.ts"

export type Take = { readonly ok: true } | { readonly ok: false; readonly retryAfterSeconds: number }

export interface ChatRateLimiterService {
  /** Takes one request from the workspace's bucket at `nowMs`, or says how long until one is back. */
  readonly take: (workspaceId: string, nowMs: number) => Take
  /** Buckets held (for tests of the memory bound). */
  readonly size: () => number
}

const MINUTE_MS = 60_000

export const makeChatRateLimiter = (perMinute: number): ChatRateLimiterService => {
  if (!Number.isInteger(perMinute) || perMinute <= 0) throw new Error(`the chat rate limit must be a positive integer, got ${perMinute}`)
  const msPerToken = MINUTE_MS / perMinute
  /** workspaceId -> tokens left at `at`. A missing bucket is a full one. */
  const buckets = new Map<string, { tokens: number; at: number }>()
  let sweptAt = -Infinity

  const refilled = (bucket: { readonly tokens: number; readonly at: number }, nowMs: number) =>
    // a clock stepping back refills nothing
    Math.min(perMinute, bucket.tokens + Math.max(0, nowMs - bucket.at) / msPerToken)

  // Every bucket idle for a minute is full again, which is what a missing bucket means: dropping
  // those once a minute keeps only the workspaces active in the last minute.
  const sweep = (nowMs: number) => {
    if (nowMs - sweptAt < MINUTE_MS) return
    sweptAt = nowMs
    for (const [workspaceId, bucket] of buckets) if (refilled(bucket, nowMs) >= perMinute) buckets.delete(workspaceId)
  }

  return {
    take: (workspaceId, nowMs) => {
      sweep(nowMs)
      const bucket = buckets.get(workspaceId)
      const tokens = bucket === undefined ? perMinute : refilled(bucket, nowMs)
      if (tokens >= 1) {
        buckets.set(workspaceId, { tokens: tokens - 1, at: nowMs })
        return { ok: true }
      }
      // the refill is not recorded: a refused request costs nothing
      return { ok: false, retryAfterSeconds: retryAfterSeconds((1 - tokens) * msPerToken) }
    },
    size: () => buckets.size
  }
}

export class ChatRateLimiter extends Context.Tag("svc/assistant/ChatRateLimiter")<ChatRateLimiter, ChatRateLimiterService>() {}

/** The process's limiter at `AssistantConfig.chatRateLimitPerMinute` (default 120). */
export const chatRateLimiterLayer: Layer.Layer<ChatRateLimiter, never, AssistantSettings> = Layer.effect(
  ChatRateLimiter,
  Effect.map(AssistantSettings, (settings) => makeChatRateLimiter(settings.chatRateLimitPerMinute))
)
