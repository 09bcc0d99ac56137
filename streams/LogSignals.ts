/**
 * Signals pushed from the log tail. Each node tails every partition of the log from where it
 * stood when the node started, and hands the events of the keys someone listens to (a running
 * turn's conversation, a followed task) to those listeners as they arrive: what a turn or a
 * caller waits for is completed by the log, wherever the event was appended, instead of by a loop
 * reading a read model.
 *
 * A listener hears what the tail delivers after it began listening. To miss nothing, listen
 * first, then read the state to compare against once the read models have passed `from` (where
 * the tail stood on the key's partition when listening began), then wait: an event is either in
 * that state or heard afterwards (possibly both; the listener tells by `seq`).
 */
import { Context, Effect, Layer, Queue, Runtime, type Scope, Stream } from "effect"
import { type ActorKind, decodeEvent, keyOf, kindOfKey } from "../actors/kernel.ts"
import { Db, type DbError, query } from "./Db.ts"
import { ActorHost, ActorKinds, HostUnavailable } from "./ActorHost.ts"
import { allPartitions, EventLog, type LogChunk, type LoggedEvent, type LogError } from "./EventLog.ts"
import { partitionFor } from "./partitioner.ts"
import { decodeState } from "./Projector.ts"
import type { Position } from "./ReadFence.ts"
import { dependencyRetry } from "./Backoff.ts"

type AnyEvent = { readonly _tag: string }

/** One event of a listened key, decoded with its actor kind. */
export interface Signal<E extends AnyEvent = AnyEvent> {
  readonly event: E
  readonly seq: number
  readonly position: Position
}

export interface Listening {
  /**
   * Where the tail stood on the key's partition when listening began: the offset of the last
   * record it had delivered (-1: none yet). State read once the read models passed it holds every
   * event this listener will not hear.
   */
  readonly from: Position
  readonly stop: () => void
}

export interface Watch<E extends AnyEvent> {
  readonly from: Position
  /** The next event heard, in log order; waits for one. */
  readonly take: Effect.Effect<Signal<E>>
}

export interface LogSignalsService {
  /**
   * Calls `hear` (synchronously, on the tail's fiber: keep it short) with each event of the key
   * (of `types` only, when given) the tail delivers from now on, until `stop`.
   */
  readonly listen: <E extends AnyEvent>(
    kind: ActorKind<any, any, E, any>,
    id: string,
    hear: (signal: Signal<E>) => void,
    types?: ReadonlyArray<E["_tag"]>
  ) => Listening
  /** Like `listen`, for every key of the kind: what a node must notice wherever it is appended
   * (a run to drive, an automation to schedule). */
  readonly listenKind: <E extends AnyEvent>(
    kind: ActorKind<any, any, E, any>,
    hear: (signal: Signal<E> & { readonly key: string }) => void,
    types?: ReadonlyArray<E["_tag"]>
  ) => { readonly stop: () => void }
  /** The key's events (of `types`, when given) as a queue, for as long as the scope lasts. */
  readonly watch: <E extends AnyEvent>(
    kind: ActorKind<any, any, E, any>,
    id: string,
    types?: ReadonlyArray<E["_tag"]>
  ) => Effect.Effect<Watch<E>, never, Scope.Scope>
}

export class LogSignals extends Context.Tag("svc/streams/LogSignals")<LogSignals, LogSignalsService>() {}

interface Listener {
  readonly types: ReadonlySet<string> | undefined
  readonly hear: (signal: Signal & { readonly key: string }) => void
}

export const make: Effect.Effect<LogSignalsService, LogError, EventLog | ActorKinds | Scope.Scope> = Effect.gen(function* () {
  const log = yield* EventLog
  const kinds = yield* ActorKinds
  const partitions = allPartitions(log.partitions)
  const listeners = new Map<string, Set<Listener>>()
  const kindListeners = new Map<string, Set<Listener>>()
  // the tail dispatches synchronously; what it cannot decode is logged by the node's logger all the same
  const runSync = Runtime.runSync(yield* Effect.runtime<never>())
  // the next offset the tail delivers, per partition: every record before it has been dispatched
  const delivered = new Map<number, number>()

  const dispatchEvent = (event: LoggedEvent, heard: ReadonlySet<Listener>) => {
    let signal: (Signal & { readonly key: string }) | undefined
    for (const listener of [...heard]) {
      if (listener.types !== undefined && !listener.types.has(event.type)) continue
      if (signal === undefined) {
        const kind = kinds.get(kindOfKey(event.key))
        if (kind === undefined) return
        try {
          signal = { event: decodeEvent(kind, event.type, event.payload), key: event.key, seq: event.seq, position: { partition: event.partition, offset: event.offset } }
        } catch (error) {
          return runSync(Effect.logError(`log signals: cannot decode ${event.type} of ${event.key} at ${event.partition}:${event.offset}`, error))
        }
      }
      listener.hear(signal)
    }
  }

  const dispatch = (chunk: LogChunk) => {
    for (const event of chunk.events) {
      const heard = listeners.get(event.key)
      if (heard !== undefined) dispatchEvent(event, heard)
      const heardByKind = kindListeners.size === 0 ? undefined : kindListeners.get(kindOfKey(event.key))
      if (heardByKind !== undefined) dispatchEvent(event, heardByKind)
    }
    delivered.set(chunk.partition, chunk.next)
  }

  // from the log's end as the node starts: nobody listened before
  const start = yield* log.endOffsets(partitions)
  for (const partition of partitions) delivered.set(partition, start.get(partition) ?? 0)
  const tail = Stream.suspend(() => log.subscribe(new Map(delivered))).pipe(
    Stream.runForEach((chunk) => Effect.sync(() => dispatch(chunk))),
    Effect.tapError((e) => Effect.logError("log signals: the tail failed; reopening it", e)),
    Effect.retry(dependencyRetry)
  )
  yield* Effect.forkScoped(tail)

  const listen: LogSignalsService["listen"] = (kind, id, hear, types) => {
    const key = keyOf(kind, id)
    const listener: Listener = { types: types === undefined ? undefined : new Set(types), hear: hear as (signal: Signal) => void }
    const heard = listeners.get(key) ?? new Set()
    listeners.set(key, heard.add(listener))
    const partition = partitionFor(key, log.partitions)
    return {
      from: { partition, offset: (delivered.get(partition) ?? 0) - 1 },
      stop: () => {
        heard.delete(listener)
        if (heard.size === 0 && listeners.get(key) === heard) listeners.delete(key)
      }
    }
  }

  const listenKind: LogSignalsService["listenKind"] = (kind, hear, types) => {
    const listener: Listener = { types: types === undefined ? undefined : new Set(types), hear: hear as Listener["hear"] }
    const heard = kindListeners.get(kind.kind) ?? new Set()
    kindListeners.set(kind.kind, heard.add(listener))
    return {
      stop: () => {
        heard.delete(listener)
        if (heard.size === 0 && kindListeners.get(kind.kind) === heard) kindListeners.delete(kind.kind)
      }
    }
  }

  const watch: LogSignalsService["watch"] = <E extends AnyEvent>(kind: ActorKind<any, any, E, any>, id: string, types?: ReadonlyArray<E["_tag"]>) =>
    Effect.gen(function* () {
      const queue = yield* Effect.acquireRelease(Queue.unbounded<Signal<E>>(), Queue.shutdown)
      const listening = yield* Effect.acquireRelease(
        Effect.sync(() => listen(kind, id, (signal) => void Queue.unsafeOffer(queue, signal), types)),
        (listening) => Effect.sync(listening.stop)
      )
      return { from: listening.from, take: Queue.take(queue) } satisfies Watch<E>
    })

  return { listen, listenKind, watch } satisfies LogSignalsService
})

export const layer: Layer.Layer<LogSignals, LogError, EventLog | ActorKinds> = Layer.scoped(LogSignals, make)

/** A key followed: its state as the read models held it once past where the tail stood, then its later events. */
export interface Followed<S, E extends AnyEvent> {
  /** The key's state and seq (0, with the kind's initial state: none yet). */
  readonly state: S
  readonly seq: number
  /** The next event after `seq`, in order; waits for one. */
  readonly take: Effect.Effect<Signal<E>>
}

/** How long following a key waits for the read models to reach where the tail stood. */
const FOLLOW_READ_TIMEOUT_MS = 10_000

/**
 * Follows a key without missing an event: listens, then reads its state (`actor_state`) once the
 * read models have passed where the tail stood (and what this node acknowledged), then hears only
 * the events after that state's seq. Fails retryably when the read models do not get there in time.
 */
export const follow = <S, E extends AnyEvent>(
  kind: ActorKind<S, any, E, any>,
  id: string
): Effect.Effect<Followed<S, E>, HostUnavailable | DbError, LogSignals | ActorHost | Db | Scope.Scope> =>
  Effect.gen(function* () {
    const watch = yield* (yield* LogSignals).watch(kind, id)
    const host = yield* ActorHost
    // past where the tail stood, and past this node's own acknowledged writes there (the key's may be among them)
    const { partition } = watch.from
    const upTo = Math.max(watch.from.offset, host.unprojected().get(partition) ?? -1)
    const caughtUp = yield* Effect.promise(() => host.awaitProjected(new Map([[partition, upTo]]), FOLLOW_READ_TIMEOUT_MS))
    if (!caughtUp) return yield* new HostUnavailable({ reason: "timeout", message: `the read models did not reach ${kind.kind} ${id}'s latest events in time` })
    const db = yield* Db
    const [row] = yield* query("followed actor state", () => db.sql`select seq, state from ${db.table("actor_state")} where key = ${keyOf(kind, id)}`)
    const seq: number = row?.seq ?? 0
    const later: Effect.Effect<Signal<E>> = Effect.flatMap(watch.take, (signal) => (signal.seq <= seq ? later : Effect.succeed(signal)))
    return { state: row === undefined ? kind.initialState : (decodeState(kind, row.state) as S), seq, take: later }
  })
