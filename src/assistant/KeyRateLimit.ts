/**
 * How many turns (A2A sends, chat stream and ask) one API key may start a minute, across the
 * cluster (docs/decisions.md, "Issue 24: a machine caller's own limit"). The key's budget actor
 * (actors/keybudget/) hands the minute out in slices; a node spends its slice on its own, one
 * counter decrement a turn, and asks for the next slice only when it is used up. Once the actor
 * says the window's budget is handed out, the node refuses the key at once until the window ends,
 * without asking again. The slices of a window add up to the budget, so nodes together admit at
 * most the budget a window; a slice a node has not spent when the window ends is dropped.
 */
import { Context, Deferred, Effect, FiberId, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { KeyBudgetActor } from "../../actors/keybudget/actor.ts"
import { type BudgetPolicy, TakeSlice } from "../../actors/keybudget/protocol.ts"
import { ActorHost, type ActorHostService } from "../../streams/ActorHost.ts"
import { RateLimited, retryAfterSeconds, Unavailable } from "../platform/Errors.ts"
import { AssistantSettings } from "./Settings.ts"

export interface KeyRateLimiterService {
  /** Takes one turn of the key's budget at `nowMs`, or refuses with `RateLimited` (`key_requests`). */
  readonly take: (keyId: string, nowMs: number) => Effect.Effect<void, RateLimited | Unavailable>
  /** Keys held (for tests of the memory bound). */
  readonly size: () => number
}

const MINUTE_MS = 60_000

/** What a node holds of one key's budget. */
interface Lease {
  /** Turns left of the node's slice. */
  tokens: number
  /** When the slice's window ends (epoch ms): its tokens are void from then on. */
  until: number
  /** Refused by the actor until then (epoch ms): the window's budget is handed out. */
  refusedUntil: number
  /** The slice being asked for; the key's other turns wait for it rather than ask again. */
  pending: Deferred.Deferred<void, RateLimited | Unavailable> | null
}

const refusal = (until: number, nowMs: number) =>
  new RateLimited({ retryAfterSeconds: retryAfterSeconds(until - nowMs), limit: "key_requests" })

export const makeKeyRateLimiter = (host: ActorHostService, limits: { readonly perMinute: number; readonly slice: number }): KeyRateLimiterService => {
  const policy: BudgetPolicy = { perWindow: limits.perMinute, windowMs: MINUTE_MS, slice: Math.min(limits.slice, limits.perMinute) }
  const leases = new Map<string, Lease>()
  let sweptAt = -Infinity

  // a lease past its window and its refusal is what a missing one means: dropped once a minute
  const sweep = (nowMs: number) => {
    if (nowMs - sweptAt < MINUTE_MS) return
    sweptAt = nowMs
    for (const [keyId, lease] of leases) if (lease.pending === null && nowMs >= lease.until && nowMs >= lease.refusedUntil) leases.delete(keyId)
  }

  /** Asks the key's actor for a slice and takes this turn from it; the key's waiting turns follow. */
  const askSlice = (keyId: string, lease: Lease, pending: Deferred.Deferred<void, RateLimited | Unavailable>, nowMs: number) =>
    Effect.gen(function* () {
      const at = new Date(nowMs).toISOString()
      const exit = yield* host.send(KeyBudgetActor, keyId, new TakeSlice({ policy }), { commandId: randomUUID(), at, actor: `key:${keyId}` }).pipe(
        // the owner out of reach: 503, retryable, as for any command
        Effect.catchTag("HostUnavailable", (e) => Effect.fail(new Unavailable({ message: e.message }))),
        Effect.flatMap(({ events }) => {
          const [slice] = events
          lease.tokens = slice.tokens - 1
          lease.until = Date.parse(slice.windowEnd)
          lease.refusedUntil = 0
          return Effect.void
        }),
        Effect.catchTag("BudgetSpent", (spent) => {
          lease.tokens = 0
          lease.refusedUntil = Date.parse(spent.windowEnd)
          return Effect.fail(refusal(lease.refusedUntil, nowMs))
        }),
        Effect.exit
      )
      lease.pending = null
      // the waiting turns take from the slice in turn (the next of them asks when it is used up),
      // or share the refusal or the failure
      yield* Deferred.done(pending, exit)
      return yield* exit
    })

  // uninterruptible but for the wait on another turn's slice: a slice asked for is always settled
  const take = (keyId: string, nowMs: number): Effect.Effect<void, RateLimited | Unavailable> =>
    Effect.uninterruptibleMask((restore) => Effect.suspend(() => {
      sweep(nowMs)
      let lease = leases.get(keyId)
      if (lease === undefined) {
        lease = { tokens: 0, until: 0, refusedUntil: 0, pending: null }
        leases.set(keyId, lease)
      }
      if (nowMs < lease.until && lease.tokens > 0) {
        lease.tokens -= 1
        return Effect.void
      }
      if (nowMs < lease.refusedUntil) return Effect.fail(refusal(lease.refusedUntil, nowMs))
      if (lease.pending !== null) return Effect.zipRight(restore(Deferred.await(lease.pending)), take(keyId, nowMs))
      // set before anything yields, so the key's next turn waits for this slice
      lease.pending = Deferred.unsafeMake<void, RateLimited | Unavailable>(FiberId.none)
      return askSlice(keyId, lease, lease.pending, nowMs)
    }))

  return { take, size: () => leases.size }
}

export class KeyRateLimiter extends Context.Tag("svc/assistant/KeyRateLimiter")<KeyRateLimiter, KeyRateLimiterService>() {}

/** The node's limiter at `AssistantConfig.keyRateLimitPerMinute` (default 6,000) and `keyRateLimitSlice`. */
export const keyRateLimiterLayer: Layer.Layer<KeyRateLimiter, never, AssistantSettings | ActorHost> = Layer.effect(
  KeyRateLimiter,
  Effect.gen(function* () {
    const settings = yield* AssistantSettings
    return makeKeyRateLimiter(yield* ActorHost, { perMinute: settings.keyRateLimitPerMinute, slice: settings.keyRateLimitSlice })
  })
)
