/**
 * Fair shares of a process (docs/decisions.md, "Fair shares"): how many streams one key and one
 * workspace may follow at once, and how many assistant turns they may run at once. A share is taken
 * as the stream or the turn starts and given back as it ends; beyond either bound the start is
 * refused with 429 `rate_limited` and `Retry-After`, before anything is recorded or opened. The
 * counts are per process, as the chat rate is: a cluster of n nodes lets a key hold up to n times
 * its share. A workspace's enabled schedules are bounded beside them (`automation.create`, `update`
 * and `enable`, src/automations/Automations.ts).
 */
import { Context, Effect, Layer } from "effect"
import type { Invocation } from "../checkpoint/Capability.ts"
import type { FairSharesConfig } from "./Config.ts"
import { admitStream } from "./Admission.ts"
import { RateLimited } from "./Errors.ts"
import { Relay } from "./Relay.ts"

/** What a caller may hold a share of. */
export type Share = "stream" | "turn"

/** Whose share it is: the credential (a key's id, else the session's) and the workspace it acts in. */
export interface Holder {
  readonly key: string
  readonly workspaceId: string
}

/** Gives a taken share back; later calls do nothing. */
export type Release = () => void

export interface FairSharesService {
  readonly limits: FairSharesConfig
  /** Takes one share of the holder's key and workspace, or refuses with `RateLimited`. */
  readonly take: (share: Share, holder: Holder) => Effect.Effect<Release, RateLimited>
}

export class FairShares extends Context.Tag("svc/FairShares")<FairShares, FairSharesService>() {}

/**
 * What a refused caller is told to wait: a share frees when someone's stream or turn ends, which no
 * one can date; a few seconds keeps a client from hammering while it is likely to be soon.
 */
export const SHARE_RETRY_AFTER_SECONDS = 5

export const holderOf = (invocation: Invocation): Holder => {
  const { apiKeyId, sessionId, attributedTo } = invocation.principal
  return { key: apiKeyId ?? sessionId ?? attributedTo, workspaceId: invocation.workspaceId! }
}

export const makeFairShares = (limits: FairSharesConfig): FairSharesService => {
  const bounds = {
    stream: { key: limits.streamsPerKey, workspace: limits.streamsPerWorkspace, limit: ["streams_per_key", "streams_per_workspace"] },
    turn: { key: limits.turnsPerKey, workspace: limits.turnsPerWorkspace, limit: ["turns_per_key", "turns_per_workspace"] }
  } as const
  /** Shares held, by share and holder (`key:<id>`, `workspace:<id>`); a holder at 0 is dropped. */
  const held = { stream: new Map<string, number>(), turn: new Map<string, number>() }
  const change = (counts: Map<string, number>, id: string, by: number) => {
    const next = (counts.get(id) ?? 0) + by
    if (next === 0) counts.delete(id)
    else counts.set(id, next)
  }
  return {
    limits,
    take: (share, holder) =>
      Effect.suspend(() => {
        const counts = held[share]
        const bound = bounds[share]
        const key = `key:${holder.key}`
        const workspace = `workspace:${holder.workspaceId}`
        const refused = (counts.get(key) ?? 0) >= bound.key ? bound.limit[0] : (counts.get(workspace) ?? 0) >= bound.workspace ? bound.limit[1] : undefined
        if (refused !== undefined) return Effect.fail(new RateLimited({ retryAfterSeconds: SHARE_RETRY_AFTER_SECONDS, limit: refused }))
        change(counts, key, 1)
        change(counts, workspace, 1)
        let released = false
        return Effect.succeed(() => {
          if (released) return
          released = true
          change(counts, key, -1)
          change(counts, workspace, -1)
        })
      })
  }
}

export const layer = (limits: FairSharesConfig) => Layer.succeed(FairShares, makeFairShares(limits))

/**
 * A relay a caller follows (a chat turn's events, an A2A task's updates), holding a place among the
 * node's streams (`Overloaded` when there is none) and a stream share of its key and workspace,
 * from now until its last update.
 */
export const followedRelay = <E, O>(invocation: Invocation) =>
  Effect.gen(function* () {
    const shares = yield* FairShares
    const place = yield* admitStream
    const share = yield* shares.take("stream", holderOf(invocation)).pipe(Effect.onError(() => Effect.sync(place)))
    return new Relay<E, O>(() => {
      share()
      place()
    })
  })

/** Takes a turn share of the invocation's key and workspace; the turn gives it back as it ends. */
export const takeTurnShare = (invocation: Invocation) => Effect.flatMap(FairShares, (shares) => shares.take("turn", holderOf(invocation)))
