/**
 * Resuming a turn's chat stream (docs/chat.md, "Resuming a stream"): what a client missed after
 * the event whose `id:` it last saw, then the rest as it is recorded, to the same `done` the
 * turn's own stream ended with. It works on any node, while the turn runs (on this node or
 * another) and after it ended, because it reads the turn's stream from the log: the chunks its
 * conversation recorded (`run.streamed`, read back from `run_stream_chunks`) and then those this
 * node's tail delivers, until `run.finished`.
 *
 * Each event goes out once, in order, by its `seq`: a chunk read back and heard on the tail both,
 * or recorded twice, gives each `seq` once. The log is coarser than the turn's own stream (a chunk
 * every quarter second or so): a client that saw part of a chunk is sent the rest of it, from the
 * event after the one it saw.
 */
import { Effect, Fiber, Schema } from "effect"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import type { RunFinished } from "../../actors/conversation/events.ts"
import type { Json } from "../../actors/kernel.ts"
import { ActorHost, HostUnavailable } from "../../streams/ActorHost.ts"
import { allPartitions, EventLog } from "../../streams/EventLog.ts"
import { LogSignals } from "../../streams/LogSignals.ts"
import { startInBackground } from "../checkpoint/Background.ts"
import type { Invocation } from "../checkpoint/Capability.ts"
import { followedRelay } from "../platform/FairShares.ts"
import type { Listener, Started } from "../platform/Relay.ts"
import { ChatEvent, TurnResult } from "../platform/Wire.ts"
import type { TurnOutcome } from "./ChatEvents.ts"
import { findOwnTurn, findRun, openRunEnd, openStreamed, type RunRecord, runStreamChunks } from "./Queries.ts"
import { failure, STREAM_ERROR } from "./TurnRecording.ts"
import { isAbandonment } from "./TurnRegistry.ts"

/** A chat event with its SSE `id:`, its `seq` in the turn's stream. */
export interface SequencedEvent {
  readonly id: number
  readonly event: ChatEvent
}

/**
 * How the stream ends: the turn's outcome, framed as the turn's own stream framed it (`done` with
 * the result, or `error` then `done` with `[DONE]`), from `id` on; null when the turn's end could
 * not be followed (then the `error` and `done` carry no id: they are not the turn's).
 */
export interface TurnEnding {
  readonly outcome: TurnOutcome
  readonly id: number | null
}

export interface ResumedTurn extends Started<SequencedEvent, TurnEnding> {
  /** The id of the last event the client saw (0: none): the end leaves out what it saw. */
  readonly after: number
  /** Stops following (the client went away). */
  readonly stop: () => void
}

/** How long the resume waits for the read models to reach the log's end or the turn's latest events. */
const CATCH_UP_MS = 10_000

const decodeEvent = Schema.decodeUnknownSync(ChatEvent)
const decodeResult = Schema.decodeUnknownSync(TurnResult)

/** The outcome a recorded end stands for, as the turn's sink was told it. */
const outcomeOf = (end: { readonly result: Json; readonly error: RunFinished["error"] }): TurnOutcome =>
  end.error !== null || end.result === null ? { failure: end.error ?? failure(null, STREAM_ERROR) } : { result: decodeResult(end.result) }

/**
 * The id of a recorded end's first event: after the turn's last recorded one, as its own stream
 * numbered it; none for the end of a run whose process died, which is not the turn's, and whose
 * stream may have sent the client more than it recorded.
 */
const endId = (end: { readonly error: RunFinished["error"] }, last: number) => (isAbandonment(end.error) ? null : last + 1)

/** The read models of this node, once they passed what the log held as the call came (bounded). */
const caughtUpWithLog = Effect.gen(function* () {
  const log = yield* EventLog
  const host = yield* ActorHost
  const ends = yield* log.endOffsets(allPartitions(log.partitions))
  const wanted = new Map([...ends].filter(([, next]) => next > 0).map(([partition, next]) => [partition, next - 1] as const))
  yield* Effect.promise(() => host.awaitProjected(wanted, CATCH_UP_MS))
})

/** What `find` finds; looked for again once this node's read models caught up (it may have been written through another node). */
export const foundOnceCaughtUp = <A, E, R>(find: Effect.Effect<A | undefined, E, R>) =>
  Effect.gen(function* () {
    const found = yield* find
    if (found !== undefined) return found
    yield* caughtUpWithLog
    return yield* find
  })

/** The caller's turn by its run id or turnId. */
export const findTurnToResume = (workspaceId: string, userId: string, id: string) => foundOnceCaughtUp(findOwnTurn(workspaceId, userId, id))

/** Hands on the run's stream after `after`, from its recorded chunks and then from the tail, and its end. */
export const followRun = (run: RunRecord, workspaceId: string, after: number, listener: Listener<SequencedEvent, TurnEnding>) =>
  Effect.scoped(
    Effect.gen(function* () {
      // listen first, then read what the read models hold once past where the tail stood: each
      // chunk is in what is read, or heard after, or both
      const watch = yield* (yield* LogSignals).watch(ConversationActor, run.conversationId, ["run.streamed", "run.finished"])
      const host = yield* ActorHost
      const { partition } = watch.from
      const upTo = Math.max(watch.from.offset, host.unprojected().get(partition) ?? -1)
      const caughtUp = yield* Effect.promise(() => host.awaitProjected(new Map([[partition, upTo]]), CATCH_UP_MS))
      if (!caughtUp) return yield* new HostUnavailable({ reason: "timeout", message: `the read models did not reach run ${run.runId}'s latest events in time` })
      let next = after + 1
      let last = 0
      const give = (events: ReadonlyArray<{ readonly seq: number; readonly event: Json }>) => {
        for (const { seq, event } of events) {
          last = Math.max(last, seq)
          if (seq < next) continue
          next = seq + 1
          listener.event({ id: seq, event: decodeEvent(event) })
        }
      }
      // the run's status before its chunks: an end read here follows every chunk in the log, so the
      // chunks read next are all of them; a run still running ends on the tail, with what follows
      const now = yield* findRun(workspaceId, run.runId)
      for (const chunk of yield* runStreamChunks(run.runId)) give(chunk)
      if (now !== undefined && now.status !== "running") return listener.done({ outcome: outcomeOf(now), id: endId(now, last) })
      for (;;) {
        const { event } = yield* watch.take
        if (event._tag === "run.streamed" && event.runId === run.runId) give(yield* openStreamed(event.events))
        else if (event._tag === "run.finished" && event.runId === run.runId) {
          const end = yield* openRunEnd(event)
          return listener.done({ outcome: outcomeOf(end), id: endId(end, last) })
        }
      }
    })
  )

/**
 * Follows the caller's turn for its resumed stream, holding a place among the node's streams and a
 * stream share of the caller's key and workspace until the end or `stop` (src/platform/FairShares.ts).
 */
export const resumeTurn = (invocation: Invocation, run: RunRecord, after: number) =>
  Effect.gen(function* () {
    const relay = yield* followedRelay<SequencedEvent, TurnEnding>(invocation)
    const lost: TurnEnding = { outcome: { failure: failure("engine_unavailable", "the turn's stream could not be followed on this node; resume again") }, id: null }
    const fiber = yield* startInBackground(
      followRun(run, invocation.workspaceId!, after, relay).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning(`assistant: following run ${run.runId}'s stream failed`, cause)),
        // a stream that ended already ignores this
        Effect.ensuring(Effect.sync(() => relay.done(lost)))
      )
    )
    const resumed: ResumedTurn = { after, listen: relay.listen, stop: () => void Effect.runFork(Fiber.interrupt(fiber)) }
    return resumed
  })
