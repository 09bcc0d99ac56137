/**
 * The actor host: the single writer of every key in the partitions this node owns.
 *
 * A command for an owned partition is decided in-process, one at a time per key; a command for a
 * partition owned elsewhere travels to its owner through the cluster. On gaining a partition the
 * host projects it up to the log's end before deciding anything there; on losing it the host stops
 * deciding at once and forgets its cached states. A reply waits until its events are projected,
 * so a caller reads its own writes.
 */
import { Context, Data, Effect, Either, Fiber, Layer, Runtime, Schedule, Schema } from "effect"
import {
  type ActorKind,
  type AnyActorKind,
  type CommandMeta,
  decodeEvent,
  encodeEvent,
  type KindRegistry,
  keyOf,
  kindOfKey
} from "../actors/kernel.ts"
import { Db } from "../src/Db.ts"
import { Cluster, type ClusterError, type RemoteCommand } from "./Cluster.ts"
import { EventLog, type EventRecord } from "./EventLog.ts"
import { partitionFor } from "./partitioner.ts"
import { decodeState, loadActor, project, rememberCommand, type StoredActor } from "./Projector.ts"

export interface Accepted<S, E> {
  readonly state: S
  readonly seq: number
  /** The events this command caused; empty when it was a retry of a command already decided. */
  readonly events: ReadonlyArray<E>
  readonly duplicate: boolean
}

/** Retryable: the owner could not be reached or changed under the command. */
export class HostUnavailable extends Data.TaggedError("HostUnavailable")<{
  readonly reason: "not_owner" | "timeout" | "ownership_lost" | "failure"
  readonly message: string
}> {}

export interface ActorHostService {
  readonly nodeId: string
  readonly send: <S, C extends { readonly _tag: string }, E extends { readonly _tag: string }, Err>(
    kind: ActorKind<S, C, E, Err>,
    id: string,
    command: C,
    meta: CommandMeta
  ) => Effect.Effect<Accepted<S, E>, Err | HostUnavailable>
  /** Partitions this node owns, those of them caught up and deciding, and how many keys it caches. */
  readonly ownership: () => { readonly owned: ReadonlyArray<number>; readonly ready: ReadonlyArray<number>; readonly cachedKeys: number }
}

export class ActorHost extends Context.Tag("svc/streams/ActorHost")<ActorHost, ActorHostService>() {}

export class ActorKinds extends Context.Tag("svc/streams/ActorKinds")<ActorKinds, KindRegistry>() {}

/** What one owned partition holds while this node owns it. */
interface Ownership {
  readonly partition: number
  /** Resolves true once caught up with the log, false if the partition is lost first. */
  readonly ready: Promise<boolean>
  readonly settleReady: (caughtUp: boolean) => void
  caughtUp: boolean
  readonly cache: Map<string, StoredActor>
  readonly mailboxes: Map<string, Promise<unknown>>
  projector: Fiber.RuntimeFiber<unknown, unknown> | undefined
  /** Next offset the projection has applied, and who waits for it. */
  applied: number
  readonly waiters: Array<{ offset: number; resolve: (applied: boolean) => void }>
  /** Recent offsets the projection did not apply (rare: rejected writes of a raced key). */
  readonly notApplied: Set<number>
}

type Reply =
  | { readonly ok: true; readonly seq: number; readonly state: unknown; readonly events: ReadonlyArray<{ type: string; payload: unknown }>; readonly duplicate: boolean }
  | { readonly ok: false; readonly rejected: unknown }
  | { readonly ok: false; readonly unavailable: HostUnavailable["reason"]; readonly message: string }

/** How many unapplied offsets each partition remembers for replies still on their way. */
const NOT_APPLIED_KEPT = 10_000

export interface ActorHostOptions {
  readonly commandTimeoutMs: number
  /** How many keys' states each owned partition keeps in memory. */
  readonly cachedKeysPerPartition: number
}

export const make = (options: ActorHostOptions) =>
  Effect.gen(function* () {
    const db = yield* Db
    const log = yield* EventLog
    const cluster = yield* Cluster
    const kinds = yield* ActorKinds
    const runtime = yield* Effect.runtime<EventLog>()
    const run = Runtime.runPromise(runtime)
    const owned = new Map<number, Ownership>()

    const settle = (ownership: Ownership, next: number, applied: ReadonlySet<number> | undefined) => {
      if (applied !== undefined) {
        for (let offset = ownership.applied; offset < next; offset++) {
          if (!applied.has(offset)) ownership.notApplied.add(offset)
        }
        for (const offset of ownership.notApplied) {
          if (ownership.notApplied.size <= NOT_APPLIED_KEPT) break
          ownership.notApplied.delete(offset)
        }
      }
      ownership.applied = next
      for (let i = ownership.waiters.length - 1; i >= 0; i--) {
        const waiter = ownership.waiters[i]
        if (waiter.offset < next) {
          ownership.waiters.splice(i, 1)
          waiter.resolve(applied !== undefined && !ownership.notApplied.has(waiter.offset))
        }
      }
    }

    /** Resolves once `offset` is projected: true if this node's projection applied it. */
    const projected = (ownership: Ownership, offset: number) =>
      offset < ownership.applied
        ? Promise.resolve(!ownership.notApplied.has(offset))
        : new Promise<boolean>((resolve) => ownership.waiters.push({ offset, resolve }))

    const gain = (partition: number) => {
      if (owned.has(partition)) return
      let settleReady!: (caughtUp: boolean) => void
      const ready = new Promise<boolean>((resolve) => (settleReady = resolve))
      const ownership: Ownership = {
        partition,
        ready,
        settleReady: (caughtUp) => {
          ownership.caughtUp = caughtUp
          settleReady(caughtUp)
        },
        caughtUp: false,
        cache: new Map(),
        mailboxes: new Map(),
        projector: undefined,
        applied: 0,
        waiters: [],
        notApplied: new Set()
      }
      owned.set(partition, ownership)
      ownership.projector = Runtime.runFork(runtime)(
        project(db, kinds, [partition], (_, next, applied) => settle(ownership, next, applied))
      )
      // catch up to the end of the log as it stands now, then decide
      Runtime.runFork(runtime)(
        Effect.gen(function* () {
          const end = (yield* log.endOffsets([partition])).get(partition) ?? 0
          if (end > 0) yield* Effect.promise(() => projected(ownership, end - 1))
          if (owned.get(partition) === ownership) ownership.settleReady(true)
        }).pipe(Effect.retry(Schedule.spaced("1 second")))
      )
    }

    const lose = (partition: number) => {
      const ownership = owned.get(partition)
      if (ownership === undefined) return
      owned.delete(partition)
      if (ownership.projector) Runtime.runFork(runtime)(Fiber.interrupt(ownership.projector))
      ownership.settleReady(false)
      for (const waiter of ownership.waiters.splice(0)) waiter.resolve(false)
    }

    /** Decides one command on this node, as the owner of the key's partition. */
    const decideHere = async (ownership: Ownership, kind: AnyActorKind, key: string, command: { readonly _tag: string }, meta: CommandMeta): Promise<Reply> => {
      if (!(await ownership.ready) || owned.get(ownership.partition) !== ownership) return notOwner()
      // one command at a time per key: chain onto the key's mailbox
      const previous = ownership.mailboxes.get(key) ?? Promise.resolve()
      const turn = previous.then(() => decideInTurn(ownership, kind, key, command, meta))
      const tail = turn.catch(() => undefined)
      ownership.mailboxes.set(key, tail)
      void tail.then(() => {
        if (ownership.mailboxes.get(key) === tail) ownership.mailboxes.delete(key)
      })
      return turn
    }

    const decideInTurn = async (ownership: Ownership, kind: AnyActorKind, key: string, command: { readonly _tag: string }, meta: CommandMeta): Promise<Reply> => {
      if (owned.get(ownership.partition) !== ownership) return notOwner()
      let actor = ownership.cache.get(key)
      if (actor === undefined) {
        const stored = await run(loadActor(db, key))
        actor = stored === undefined
          ? { seq: 0, state: kind.initialState, recentCommands: [] }
          : { ...stored, state: decodeState(kind, stored.state) }
        if (owned.get(ownership.partition) !== ownership) return notOwner()
        remember(ownership, key, actor)
      }
      if (actor.recentCommands.includes(meta.commandId)) {
        return { ok: true, seq: actor.seq, state: encodeState(kind, actor.state), events: [], duplicate: true }
      }
      const decision = kind.decide(actor.state, command, meta)
      if (Either.isLeft(decision)) return { ok: false, rejected: Schema.encodeSync(kind.errors)(decision.left) }
      const events = decision.right
      if (events.length === 0) {
        return { ok: true, seq: actor.seq, state: encodeState(kind, actor.state), events: [], duplicate: false }
      }
      const encoded = events.map((e: { readonly _tag: string }) => encodeEvent(kind, e))
      const records: EventRecord[] = encoded.map((e, i) => ({
        key,
        seq: actor!.seq + i + 1,
        firstSeq: actor!.seq + 1,
        type: e.type,
        payload: e.payload,
        at: meta.at,
        commandId: meta.commandId,
        actor: meta.actor
      }))
      const appended = await run(log.append(key, records).pipe(Effect.either))
      if (Either.isLeft(appended)) {
        // the append may or may not have landed: forget the key so the next command reloads it
        ownership.cache.delete(key)
        return { ok: false, unavailable: "failure", message: appended.left.message }
      }
      if (owned.get(ownership.partition) !== ownership) {
        return { ok: false, unavailable: "ownership_lost", message: `partition ${ownership.partition} moved while deciding` }
      }
      const state = events.reduce((s: unknown, e: unknown) => kind.evolve(s, e), actor.state)
      const seq = actor.seq + events.length
      remember(ownership, key, { seq, state, recentCommands: rememberCommand(actor.recentCommands, meta.commandId) })
      // a command applies all or nothing: its last event tells
      if (!(await projected(ownership, appended.right[appended.right.length - 1]))) {
        // another writer got to the key first (this node was a stale owner, or raced one):
        // the read model holds the truth, and a retry with the same command id learns it
        ownership.cache.delete(key)
        return { ok: false, unavailable: "ownership_lost", message: `${key} was written concurrently by another owner; retry` }
      }
      return { ok: true, seq, state: encodeState(kind, state), events: encoded, duplicate: false }
    }

    /**
     * Caches a key's state, most recent last. Past the bound the least recent idle keys go: an idle
     * key's events are projected (replies wait for that), so it reloads from `actor_state`.
     */
    const remember = (ownership: Ownership, key: string, actor: StoredActor) => {
      ownership.cache.delete(key)
      ownership.cache.set(key, actor)
      if (ownership.cache.size <= options.cachedKeysPerPartition) return
      for (const idle of ownership.cache.keys()) {
        if (ownership.cache.size <= options.cachedKeysPerPartition) break
        if (!ownership.mailboxes.has(idle)) ownership.cache.delete(idle)
      }
    }

    const notOwner = (): Reply => ({ ok: false, unavailable: "not_owner", message: "this node does not own the partition" })

    const onCommand = async (partition: number, remote: RemoteCommand): Promise<Reply> => {
      const ownership = owned.get(partition)
      const kind = kinds.get(kindOfKey(remote.key))
      if (ownership === undefined) return notOwner()
      if (kind === undefined) return { ok: false, unavailable: "failure", message: `unknown actor kind of ${remote.key}` }
      const command = Schema.decodeUnknownSync(kind.commands)(remote.body) as { readonly _tag: string }
      return decideHere(ownership, kind, remote.key, command, { commandId: remote.commandId, at: remote.at, actor: remote.actor })
    }

    yield* cluster.join({
      onAssigned: (partitions) => partitions.forEach(gain),
      onRevoked: (partitions) => partitions.forEach(lose),
      onCommand
    })
    yield* Effect.addFinalizer(() => Effect.sync(() => [...owned.keys()].forEach(lose)))

    const deadline = (ms: number) => Date.now() + ms

    const send: ActorHostService["send"] = (kind, id, command, meta) => {
      const key = keyOf(kind, id)
      const partition = partitionFor(key, log.partitions)
      const until = deadline(options.commandTimeoutMs)
      const attempt = (): Effect.Effect<Reply, HostUnavailable> => {
        const ownership = owned.get(partition)
        if (ownership !== undefined) return Effect.promise(() => decideHere(ownership, kind, key, command, meta))
        return cluster
          .send(partition, { key, commandId: meta.commandId, at: meta.at, actor: meta.actor, body: Schema.encodeSync(kind.commands)(command) }, Math.max(1, until - Date.now()))
          .pipe(
            Effect.map((reply) => reply as Reply),
            Effect.mapError((e) => new HostUnavailable({ reason: e.reason === "timeout" ? "timeout" : "not_owner", message: e.message }))
          )
      }
      // ownership moves during rebalances: retry until the deadline, then give up retryably
      const routed: Effect.Effect<Reply, HostUnavailable> = attempt().pipe(
        Effect.flatMap((reply) =>
          !reply.ok && "unavailable" in reply && reply.unavailable === "not_owner"
            ? Effect.fail(new HostUnavailable({ reason: "not_owner", message: reply.message }))
            : Effect.succeed(reply)
        ),
        Effect.catchTag("HostUnavailable", (e) =>
          Date.now() < until ? Effect.zipRight(Effect.sleep("100 millis"), Effect.suspend(() => routed)) : Effect.fail(e)
        )
      )
      return routed.pipe(
        Effect.flatMap((reply) => fromReply(kind, reply)),
        Effect.withSpan("ActorHost.send", { attributes: { key, partition, command: command._tag } })
      )
    }

    return {
      nodeId: cluster.nodeId,
      send,
      ownership: () => ({
        owned: [...owned.keys()].sort((a, b) => a - b),
        ready: [...owned.values()].filter((o) => o.caughtUp).map((o) => o.partition).sort((a, b) => a - b),
        cachedKeys: [...owned.values()].reduce((n, o) => n + o.cache.size, 0)
      })
    } satisfies ActorHostService
  })

const encodeState = (kind: AnyActorKind, state: unknown) => Schema.encodeSync(kind.state)(state)

const fromReply = <S, C extends { readonly _tag: string }, E extends { readonly _tag: string }, Err>(
  kind: ActorKind<S, C, E, Err>,
  reply: Reply
): Effect.Effect<Accepted<S, E>, Err | HostUnavailable> => {
  if (reply.ok) {
    return Effect.succeed({
      seq: reply.seq,
      state: Schema.decodeUnknownSync(kind.state)(reply.state),
      events: reply.events.map((e) => decodeEvent(kind, e.type, e.payload) as E),
      duplicate: reply.duplicate
    })
  }
  if ("rejected" in reply) return Effect.fail(Schema.decodeUnknownSync(kind.errors)(reply.rejected))
  return Effect.fail(new HostUnavailable({ reason: reply.unavailable, message: reply.message }))
}

export const layer = (options: ActorHostOptions): Layer.Layer<ActorHost, ClusterError, Db | EventLog | Cluster | ActorKinds> =>
  Layer.scoped(ActorHost, make(options))
