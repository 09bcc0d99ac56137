/**
 * The actor host: the single writer of every key in the partitions this node owns.
 *
 * One worker per owned partition drains the commands queued for it, decides each in arrival order
 * against in-memory state (a later command sees the earlier ones' events), appends the whole
 * batch's events in one append through the partition's fenced writer, and answers each command
 * once that append is durable. The projection folds the log into the read models behind it, off
 * the write path; an answer names the log position of its events, so a read that must see them
 * waits for the projection to pass that position (`ReadFence.ts`).
 *
 * A command for a partition owned elsewhere travels to its owner through the cluster. On gaining a
 * partition the host opens its writer (fencing the previous owner) and projects it up to the
 * log's end before deciding anything there; on losing it the host stops deciding at once and
 * forgets its cached states.
 *
 * Records that no actor decides (audit records, telemetry batches, keys `svc issue-key` writes)
 * are appended through the same writer (`append`): a partition's hash chain (docs/audit.md) needs
 * one writer, and on Kafka that is the owner's fenced writer, which holds the chain's head.
 */
import { Context, Data, Effect, Either, ExecutionStrategy, Exit, Fiber, Layer, Option, Runtime, Schedule, Schema, Scope } from "effect"
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
import { Gauge } from "prom-client"
import { randomUUID } from "node:crypto"
import { Db, type DbService, query } from "./Db.ts"
import { Cluster, type ClusterError, type RemoteCommand } from "./Cluster.ts"
import { AuditSigner } from "./Checkpoints.ts"
import { EventLog, type EventRecord, LogError, type PartitionWriter } from "./EventLog.ts"
import { NodeMetrics } from "./Metrics.ts"
import { partitionFor } from "./partitioner.ts"
import { decodeState, project, rememberCommand, type StoredActor } from "./Projector.ts"
import { addPosition, noteWrite, type Position, type Positions } from "./ReadFence.ts"

export interface Accepted<S, E> {
  readonly state: S
  readonly seq: number
  /** The events this command caused; empty when it was a retry of a command already decided. */
  readonly events: ReadonlyArray<E>
  readonly duplicate: boolean
  /** Where the key's last event this node knows of sits, while it may not be projected yet. */
  readonly position: Position | undefined
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
  /** The positions of the commands this node acknowledged that the read models may not hold yet. */
  readonly unprojected: () => Positions
  /** Resolves once every partition owned now has caught up with the log (false: one was lost first). */
  readonly caughtUp: () => Promise<boolean>
  /** Resolves true once the read models have passed every position, false if `timeoutMs` passes first. */
  readonly awaitProjected: (positions: Positions, timeoutMs: number) => Promise<boolean>
  /**
   * Appends records no actor decides to `partition` through its single writer (this node's when
   * it owns the partition, else its owner's, reached through the cluster), so that they join the
   * partition's hash chain; the offset of each once durable. Retried while ownership moves, until
   * the command timeout.
   */
  readonly append: (partition: number, records: ReadonlyArray<EventRecord>) => Effect.Effect<ReadonlyArray<number>, LogError>
}

export class ActorHost extends Context.Tag("svc/streams/ActorHost")<ActorHost, ActorHostService>() {}

export class ActorKinds extends Context.Tag("svc/streams/ActorKinds")<ActorKinds, KindRegistry>() {}

/** A key's state while its partition is owned here; `position`: its last event's offset, if this node appended it. */
interface CachedActor extends StoredActor {
  readonly position: number | undefined
}

type Outcome =
  | {
      readonly ok: true
      readonly seq: number
      readonly state: unknown
      readonly events: ReadonlyArray<{ readonly _tag: string }>
      readonly duplicate: boolean
      readonly position: Position | undefined
    }
  | { readonly ok: false; readonly rejected: unknown }
  | { readonly ok: false; readonly unavailable: HostUnavailable["reason"]; readonly message: string }

/** An outcome as it crosses the cluster: state, events and rejection encoded. */
type Reply =
  | {
      readonly ok: true
      readonly seq: number
      readonly state: unknown
      readonly events: ReadonlyArray<{ type: string; payload: unknown }>
      readonly duplicate: boolean
      readonly position: Position | null
    }
  | { readonly ok: false; readonly rejected: unknown }
  | { readonly ok: false; readonly unavailable: HostUnavailable["reason"]; readonly message: string }

interface Job {
  readonly kind: AnyActorKind
  readonly key: string
  readonly command: { readonly _tag: string }
  readonly meta: CommandMeta
  readonly settle: (outcome: Outcome) => void
}

/** What one owned partition holds while this node owns it. */
interface Ownership {
  readonly partition: number
  /** Resolves true once the writer is open and the projection has caught up with the log, false if the partition is lost first. */
  ready: Promise<boolean>
  caughtUp: boolean
  readonly scope: Scope.CloseableScope
  /** The partition's writer, in a scope of its own within `scope`, reopened after a failed append. */
  writer: { readonly writer: PartitionWriter; readonly scope: Scope.CloseableScope } | undefined
  readonly cache: Map<string, CachedActor>
  readonly queue: Array<Job>
  working: boolean
  /** Next offset the projection has applied, and who waits for it. */
  applied: number
  readonly waiters: Set<{ readonly offset: number; readonly resolve: (passed: boolean) => void }>
  /**
   * Why catching up last failed (the log or the database is down), until it succeeds: commands
   * are then refused at once, retryably, rather than held until the command timeout.
   */
  stalled: string | undefined
  /** Events appended since the partition's last signed checkpoint, and whether one is being appended. */
  uncheckpointed: number
  checkpointing: boolean
}

/** The reserved key of a command that carries records to append (no actor kind has it: no colon). */
const APPEND_KEY = "$append"

const AppendedRecords = Schema.Array(Schema.Struct({
  key: Schema.String,
  seq: Schema.Number,
  firstSeq: Schema.Number,
  type: Schema.String,
  payload: Schema.Unknown,
  at: Schema.String,
  commandId: Schema.String,
  actor: Schema.String
}))

type AppendReply =
  | { readonly ok: true; readonly offsets: ReadonlyArray<number> }
  | { readonly ok: false; readonly unavailable: HostUnavailable["reason"]; readonly message: string }

/** Checkpoints are operations, not domain time: real time whatever clock the node's logic sees. */
const realSleep = (ms: number) =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(timer))
  })

/** Commands one batch decides and appends together. */
const MAX_COMMANDS_PER_BATCH = 512

/** How often a wait for a partition projected on another node reads its checkpoint. */
const REMOTE_CHECKPOINT_POLL_MS = 10

/** How long a scrape waits for the log's end offsets before it reports no projection lag. */
const LAG_SCRAPE_TIMEOUT_MS = 2_000

export interface ActorHostOptions {
  readonly commandTimeoutMs: number
  /** How many keys' states each owned partition keeps in memory. */
  readonly cachedKeysPerPartition: number
  /**
   * How long a writer told it is fenced waits for the partition to be taken from this node before
   * it opens again: longer than a heartbeat of the cluster (by default half Kafka's 10 s session).
   */
  readonly fencedWriterGraceMs?: number
}

export const make = (options: ActorHostOptions) =>
  Effect.gen(function* () {
    const db = yield* Db
    const log = yield* EventLog
    const cluster = yield* Cluster
    const kinds = yield* ActorKinds
    const metrics = yield* NodeMetrics
    const signer = Option.getOrUndefined(yield* Effect.serviceOption(AuditSigner))
    const runtime = yield* Effect.runtime<EventLog>()
    const run = Runtime.runPromise(runtime)
    const fork = Runtime.runFork(runtime)
    const owned = new Map<number, Ownership>()
    /** The highest offset of the commands this node acknowledged (decided here or by another owner), per partition. */
    const acked = new Map<number, number>()
    /** Checkpoints of partitions projected elsewhere, as last read. */
    const remoteApplied = new Map<number, number>()

    const settleProjected = (ownership: Ownership, next: number) => {
      ownership.applied = next
      evict(ownership)
      for (const waiter of ownership.waiters) {
        if (waiter.offset < next) {
          ownership.waiters.delete(waiter)
          waiter.resolve(true)
        }
      }
    }

    /** Resolves once `offset` is projected (true), or the partition is lost or the time is up (false). */
    const projected = (ownership: Ownership, offset: number, timeoutMs?: number) =>
      offset < ownership.applied
        ? Promise.resolve(true)
        : new Promise<boolean>((resolve) => {
            const waiter = {
              offset,
              resolve: (passed: boolean) => {
                if (timer !== undefined) clearTimeout(timer)
                resolve(passed)
              }
            }
            const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
              ownership.waiters.delete(waiter)
              resolve(false)
            }, timeoutMs)
            ownership.waiters.add(waiter)
          })

    /** An append that hangs (a broker gone quiet) must not hold the partition's queue, or its caller, forever. */
    const boundedAppend = (writer: PartitionWriter, records: ReadonlyArray<EventRecord>) =>
      writer.append(records).pipe(
        Effect.timeoutFail({
          duration: options.commandTimeoutMs,
          onTimeout: () => new LogError({ operation: "append", message: `no answer from the log within ${options.commandTimeoutMs} ms` })
        })
      )

    /** Catching up cannot go on for now: what is queued, and what comes until it succeeds, is refused. */
    const stall = (ownership: Ownership, why: string) => {
      ownership.stalled = why
      for (const job of ownership.queue.splice(0)) job.settle(stalledOutcome(ownership))
    }

    /** Opens the writer (fencing the previous owner), then projects up to the log's end as it stands. */
    const catchUp = (ownership: Ownership): Promise<boolean> =>
      run(
        Effect.gen(function* () {
          if (ownership.writer === undefined) {
            const scope = yield* Scope.fork(ownership.scope, ExecutionStrategy.sequential)
            const writer = yield* Scope.extend(log.openWriter(ownership.partition), scope).pipe(
              Effect.tapError(() => Scope.close(scope, Exit.void))
            )
            ownership.writer = { writer, scope }
          }
          const end = (yield* log.endOffsets([ownership.partition])).get(ownership.partition) ?? 0
          const caughtUp = end === 0 || (yield* Effect.promise(() => projected(ownership, end - 1)))
          if (caughtUp && owned.get(ownership.partition) === ownership) ownership.caughtUp = true
          ownership.stalled = undefined
          return ownership.caughtUp
        }).pipe(
          Effect.tapError((error) =>
            Effect.zipRight(Effect.sync(() => stall(ownership, error.message)), Effect.logWarning(`partition ${ownership.partition}: catching up failed; retrying`, error))
          ),
          Effect.retry({ schedule: Schedule.spaced("1 second"), while: () => owned.get(ownership.partition) === ownership }),
          Effect.orElseSucceed(() => false)
        )
      )

    /**
     * After a refused or failed append: forget what is cached, catch up with the log again. A
     * writer whose append failed otherwise (an unknown outcome) is reopened; a fenced one is kept:
     * reopening it would fence the partition's new owner (the embedded log fences per key, and its
     * writer goes on).
     */
    const resync = (ownership: Ownership, reopenWriter: boolean) => {
      if (reopenWriter && ownership.writer !== undefined) {
        fork(Scope.close(ownership.writer.scope, Exit.void))
        ownership.writer = undefined
      }
      if (!reopenWriter && log.mode !== "embedded") reopenIfStillOwned(ownership, ownership.writer)
      ownership.caughtUp = false
      ownership.cache.clear()
      ownership.ready = catchUp(ownership)
    }

    /**
     * A Kafka writer told it is fenced keeps its partition's appends refused until the rebalance that
     * gave the partition to another node takes it from this one. A restarting broker's transaction
     * coordinator ends open transactions the way a newer writer's would, so a writer can be told it
     * is fenced when nobody else writes: still the owner after the grace, this node opens it again.
     * Wrong about it (a new owner it has not heard of yet), it only costs availability: a writer
     * commits only while nobody opened one after it, and each opens before it catches up and decides.
     */
    const reopenIfStillOwned = (ownership: Ownership, fenced: Ownership["writer"]) =>
      setTimeout(() => {
        if (owned.get(ownership.partition) === ownership && fenced !== undefined && ownership.writer === fenced) resync(ownership, true)
      }, options.fencedWriterGraceMs ?? 5_000).unref()

    const gain = (partition: number) => {
      if (owned.has(partition)) return
      const ownership: Ownership = {
        partition,
        ready: Promise.resolve(false),
        caughtUp: false,
        scope: Effect.runSync(Scope.make()),
        writer: undefined,
        cache: new Map(),
        queue: [],
        working: false,
        applied: 0,
        waiters: new Set(),
        stalled: undefined,
        uncheckpointed: 0,
        checkpointing: false
      }
      owned.set(partition, ownership)
      ownership.ready = catchUp(ownership)
    }

    /**
     * One projection runner folds every owned partition: what arrives together from several
     * partitions goes in one transaction, where a runner per partition would pay a transaction's
     * fixed cost (about ten statements) for each partition's few events. Restarted when the owned
     * set changes.
     */
    let projector: { readonly partitions: string; readonly fiber: Fiber.RuntimeFiber<unknown, unknown> } | undefined
    const reproject = () => {
      const partitions = [...owned.keys()].sort((a, b) => a - b)
      if (projector?.partitions === partitions.join(",")) return
      if (projector !== undefined) fork(Fiber.interrupt(projector.fiber))
      projector = partitions.length === 0 ? undefined : {
        partitions: partitions.join(","),
        fiber: fork(project(db, kinds, partitions, (partition, next) => {
          const ownership = owned.get(partition)
          if (ownership !== undefined) settleProjected(ownership, next)
        }, (error) => {
          // a partition catching up waits on the projection: it is stalled too
          for (const ownership of owned.values()) if (!ownership.caughtUp) stall(ownership, error.message)
        }))
      }
    }

    const lose = (partition: number) => {
      const ownership = owned.get(partition)
      if (ownership === undefined) return
      owned.delete(partition)
      ownership.caughtUp = false
      fork(Scope.close(ownership.scope, Exit.void))
      for (const waiter of ownership.waiters) waiter.resolve(false)
      ownership.waiters.clear()
      // queued commands are answered by the worker, which finds the partition gone
      if (!ownership.working) for (const job of ownership.queue.splice(0)) job.settle(notOwner())
    }

    const enqueue = (ownership: Ownership, job: Job) => {
      if (ownership.stalled !== undefined) return job.settle(stalledOutcome(ownership))
      ownership.queue.push(job)
      if (!ownership.working) void work(ownership)
    }

    const work = async (ownership: Ownership) => {
      ownership.working = true
      try {
        while (ownership.queue.length > 0) {
          const ready = await ownership.ready
          if (!ready || owned.get(ownership.partition) !== ownership) {
            for (const job of ownership.queue.splice(0)) job.settle(notOwner())
            break
          }
          await decideBatch(ownership, ownership.queue.splice(0, MAX_COMMANDS_PER_BATCH))
        }
      } finally {
        ownership.working = false
      }
    }

    /** Loads the states of the keys the batch needs that are not cached (all projected: see `evict`). */
    const loadMissing = async (ownership: Ownership, jobs: ReadonlyArray<Job>) => {
      const kindOf = new Map<string, AnyActorKind>()
      for (const job of jobs) if (!ownership.cache.has(job.key)) kindOf.set(job.key, job.kind)
      if (kindOf.size === 0) return
      // the driver's failure, not a fiber's pretty-printed cause: it becomes the caller's answer
      const stored = await run(Effect.either(loadActors(db, [...kindOf.keys()]))).then((loaded) =>
        Either.isRight(loaded) ? loaded.right : Promise.reject(new Error(loaded.left.message))
      )
      for (const [key, kind] of kindOf) {
        const found = stored.get(key)
        ownership.cache.set(key, found === undefined
          ? { seq: 0, state: kind.initialState, recentCommands: [], position: undefined }
          : { ...found, state: decodeState(kind, found.state), position: undefined })
      }
    }

    const decideBatch = async (ownership: Ownership, jobs: ReadonlyArray<Job>) => {
      metrics.batchCommands.observe(jobs.length)
      try {
        await loadMissing(ownership, jobs)
      } catch (error) {
        for (const job of jobs) job.settle(failure(`loading actor state failed: ${(error as Error).message}`))
        return
      }
      if (owned.get(ownership.partition) !== ownership) {
        for (const job of jobs) job.settle(notOwner())
        return
      }
      // decided in order against the states as the batch's earlier commands leave them
      const working = new Map<string, CachedActor>()
      const records: Array<EventRecord> = []
      const decided: Array<{ readonly job: Job; readonly outcome: Outcome; readonly lastRecord: number | undefined }> = []
      for (const job of jobs) {
        const actor = working.get(job.key) ?? ownership.cache.get(job.key)!
        const { outcome, next, events } = decideOne(job, actor, ownership.partition)
        if (next === undefined) {
          decided.push({ job, outcome, lastRecord: undefined })
          continue
        }
        events.forEach((e, i) =>
          records.push({
            key: job.key,
            seq: actor.seq + i + 1,
            firstSeq: actor.seq + 1,
            type: e.type,
            payload: e.payload,
            at: job.meta.at,
            commandId: job.meta.commandId,
            actor: job.meta.actor
          })
        )
        working.set(job.key, next)
        decided.push({ job, outcome, lastRecord: records.length - 1 })
      }
      if (records.length === 0) {
        for (const { job, outcome } of decided) job.settle(outcome)
        return
      }
      const appendStarted = performance.now()
      const appended = await run(Effect.either(boundedAppend(ownership.writer!.writer, records)))
      // observed together, so that a scrape never sees one without the other
      metrics.appendSeconds.observe((performance.now() - appendStarted) / 1000)
      metrics.appendEvents.observe(records.length)
      if (Either.isLeft(appended)) {
        // the batch is not acknowledged; what it may have written (an unknown outcome) is read back
        // from the log before the next decision
        const error = appended.left
        const outcome: Outcome = error._tag === "LogFenced"
          ? { ok: false, unavailable: "ownership_lost", message: `partition ${ownership.partition}: ${error.message}; retry` }
          : failure(error.message)
        for (const { job } of decided) job.settle(outcome)
        if (owned.get(ownership.partition) === ownership) resync(ownership, error._tag !== "LogFenced")
        return
      }
      const offsets = appended.right
      const last = offsets[offsets.length - 1]
      addPosition(acked, { partition: ownership.partition, offset: last })
      counted(ownership, records.length)
      for (let i = 0; i < records.length; i++) {
        const key = records[i].key
        const actor = working.get(key)!
        if (actor.seq === records[i].seq) working.set(key, { ...actor, position: offsets[i] })
      }
      for (const [key, actor] of working) remember(ownership, key, actor)
      for (const { job, outcome, lastRecord } of decided) {
        if (!outcome.ok) {
          job.settle(outcome)
          continue
        }
        const offset = lastRecord !== undefined ? offsets[lastRecord] : ownership.cache.get(job.key)?.position
        job.settle({ ...outcome, position: offset === undefined ? undefined : { partition: ownership.partition, offset } })
      }
      evict(ownership)
    }

    /** One command against one key's state: the outcome, and the key's next state if it caused events. */
    const decideOne = (job: Job, actor: CachedActor, partition: number): {
      readonly outcome: Outcome
      readonly next: CachedActor | undefined
      readonly events: ReadonlyArray<{ type: string; payload: unknown }>
    } => {
      const { kind, command, meta } = job
      const position = actor.position === undefined ? undefined : { partition, offset: actor.position }
      if (actor.recentCommands.includes(meta.commandId)) {
        return { outcome: { ok: true, seq: actor.seq, state: actor.state, events: [], duplicate: true, position }, next: undefined, events: [] }
      }
      try {
        const decision = kind.decide(actor.state, command, meta)
        if (Either.isLeft(decision)) return { outcome: { ok: false, rejected: decision.left }, next: undefined, events: [] }
        const events = decision.right as ReadonlyArray<{ readonly _tag: string }>
        if (events.length === 0) {
          return { outcome: { ok: true, seq: actor.seq, state: actor.state, events: [], duplicate: false, position }, next: undefined, events: [] }
        }
        const encoded = events.map((e) => encodeEvent(kind, e))
        const state = events.reduce((s: unknown, e: unknown) => kind.evolve(s, e), actor.state)
        const seq = actor.seq + events.length
        return {
          outcome: { ok: true, seq, state, events, duplicate: false, position: undefined },
          next: { seq, state, recentCommands: rememberCommand(actor.recentCommands, meta.commandId), position: actor.position },
          events: encoded
        }
      } catch (error) {
        return { outcome: failure(`deciding ${command._tag} for ${job.key} failed: ${String(error)}`), next: undefined, events: [] }
      }
    }

    /** Caches a key's state, most recent last. */
    const remember = (ownership: Ownership, key: string, actor: CachedActor) => {
      ownership.cache.delete(key)
      ownership.cache.set(key, actor)
    }

    /**
     * Past the bound the least recent keys go, but only those whose last event the projection holds:
     * a key reloads from `actor_state`, which must not be behind what this node acknowledged.
     */
    const evict = (ownership: Ownership) => {
      if (ownership.cache.size <= options.cachedKeysPerPartition) return
      for (const [key, actor] of ownership.cache) {
        if (ownership.cache.size <= options.cachedKeysPerPartition) break
        if (actor.position === undefined || actor.position < ownership.applied) ownership.cache.delete(key)
      }
    }

    /**
     * Signed checkpoints (`Checkpoints.ts`): once `everyEvents` were appended through the
     * partition's writer since its last checkpoint, or every `everySeconds` while some were, the
     * writer appends one naming its last event's offset and hash. The checkpoint joins the chain
     * like any record; a failed one is tried again at the next count or tick.
     */
    const counted = (ownership: Ownership, events: number) => {
      ownership.uncheckpointed += events
      if (signer !== undefined && ownership.uncheckpointed >= signer.everyEvents) void checkpoint(ownership)
    }

    const checkpoint = async (ownership: Ownership) => {
      const writer = ownership.writer?.writer
      const head = writer?.head()
      if (signer === undefined || writer === undefined || head === undefined || ownership.checkpointing) return
      if (!ownership.caughtUp || owned.get(ownership.partition) !== ownership) return
      ownership.checkpointing = true
      const covered = ownership.uncheckpointed
      try {
        const record = signer.record({ partition: ownership.partition, offset: head.offset, head: head.hash, at: new Date().toISOString() })
        const appended = await run(Effect.either(writer.append([record])))
        if (Either.isRight(appended)) ownership.uncheckpointed = Math.max(0, ownership.uncheckpointed - covered)
        else if (owned.get(ownership.partition) === ownership && ownership.writer?.writer === writer) {
          resync(ownership, appended.left._tag !== "LogFenced")
        }
      } finally {
        ownership.checkpointing = false
      }
    }

    if (signer !== undefined) {
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.zipRight(
            realSleep(signer.everySeconds * 1000),
            Effect.sync(() => {
              for (const ownership of owned.values()) if (ownership.uncheckpointed > 0) void checkpoint(ownership)
            })
          )
        )
      )
    }

    const notOwner = (): Outcome => ({ ok: false, unavailable: "not_owner", message: "this node does not own the partition" })
    const failure = (message: string): Outcome => ({ ok: false, unavailable: "failure", message })
    const stalledOutcome = (ownership: Ownership) =>
      failure(`partition ${ownership.partition} cannot catch up with the log (${ownership.stalled}); retry`)

    const commandSeconds = new Map([...kinds.keys()].map((kind) => [kind, metrics.commandSeconds.labels(kind)]))

    /** Queues a command on its partition's worker; undefined when this node does not own it. */
    const decideHere = (partition: number, kind: AnyActorKind, key: string, command: { readonly _tag: string }, meta: CommandMeta) => {
      const ownership = owned.get(partition)
      if (ownership === undefined) return undefined
      return Effect.async<Outcome>((resume) => {
        const enqueued = performance.now()
        const latency = commandSeconds.get(kind.kind)
        enqueue(ownership, {
          kind,
          key,
          command,
          meta,
          settle: (outcome) => {
            latency?.observe((performance.now() - enqueued) / 1000)
            resume(Effect.succeed(outcome))
          }
        })
      })
    }

    /**
     * Appends through this node's writer of the partition, once it is ready; undefined when this
     * node does not own it. A failed append is handled as a worker's is: the partition catches up
     * again (and an unknown outcome reopens the writer) before anything else is appended.
     */
    const appendHere = (partition: number, records: ReadonlyArray<EventRecord>): Promise<AppendReply> | undefined => {
      const ownership = owned.get(partition)
      if (ownership === undefined) return undefined
      if (ownership.stalled !== undefined) return Promise.resolve(stalledOutcome(ownership) as AppendReply)
      return ownership.ready.then(async (ready): Promise<AppendReply> => {
        const writer = ownership.writer
        if (!ready || owned.get(partition) !== ownership || writer === undefined) return notOwner() as AppendReply
        const appended = await run(Effect.either(boundedAppend(writer.writer, records)))
        if (Either.isRight(appended)) {
          addPosition(acked, { partition, offset: appended.right[appended.right.length - 1] })
          counted(ownership, records.length)
          return { ok: true, offsets: appended.right }
        }
        const error = appended.left
        // the embedded log's fence is per key: a record whose key and seq are taken (a retried
        // telemetry batch) says nothing about the partition's owner
        if (error._tag === "LogFenced" && log.mode === "embedded") return { ok: false, unavailable: "failure", message: error.message }
        if (owned.get(partition) === ownership && ownership.writer === writer) resync(ownership, error._tag !== "LogFenced")
        return { ok: false, unavailable: error._tag === "LogFenced" ? "ownership_lost" : "failure", message: error.message }
      })
    }

    const append: ActorHostService["append"] = (partition, records) => {
      if (records.length === 0) return Effect.succeed([])
      const until = Date.now() + options.commandTimeoutMs
      const attempt = (): Effect.Effect<AppendReply, HostUnavailable> => {
        const here = appendHere(partition, records)
        // a partition still catching up holds its appends: the caller waits no longer than its deadline
        if (here !== undefined) {
          return Effect.promise(() => here).pipe(
            Effect.timeoutFail({
              duration: Math.max(1, until - Date.now()),
              onTimeout: () => new HostUnavailable({ reason: "timeout", message: `partition ${partition} did not append within ${options.commandTimeoutMs} ms` })
            })
          )
        }
        const remote: RemoteCommand = { key: APPEND_KEY, commandId: randomUUID(), at: records[0].at, actor: records[0].actor, body: Schema.encodeSync(AppendedRecords)(records) }
        return cluster.send(partition, remote, Math.max(1, until - Date.now())).pipe(
          Effect.map((reply) => reply as AppendReply),
          Effect.mapError((e) => new HostUnavailable({ reason: e.reason === "timeout" ? "timeout" : "not_owner", message: e.message }))
        )
      }
      // the same retries as a command's: ownership moves during rebalances
      const routed: Effect.Effect<ReadonlyArray<number>, HostUnavailable> = Effect.suspend(attempt).pipe(
        Effect.flatMap((reply) =>
          reply.ok ? Effect.succeed(reply.offsets) : Effect.fail(new HostUnavailable({ reason: reply.unavailable, message: reply.message }))
        ),
        Effect.catchTag("HostUnavailable", (e) =>
          e.reason !== "failure" && Date.now() < until ? Effect.zipRight(Effect.sleep("100 millis"), Effect.suspend(() => routed)) : Effect.fail(e)
        )
      )
      return routed.pipe(
        Effect.mapError((e) => new LogError({ operation: `append to partition ${partition}`, message: e.message })),
        Effect.withSpan("ActorHost.append", { attributes: { partition, count: records.length }, captureStackTrace: false })
      )
    }

    const onCommand = async (partition: number, remote: RemoteCommand): Promise<Reply | AppendReply> => {
      if (remote.key === APPEND_KEY) {
        const records = Schema.decodeUnknownSync(AppendedRecords)(remote.body)
        return (await appendHere(partition, records)) ?? (notOwner() as AppendReply)
      }
      const kind = kinds.get(kindOfKey(remote.key))
      if (kind === undefined) return { ok: false, unavailable: "failure", message: `unknown actor kind of ${remote.key}` }
      const command = Schema.decodeUnknownSync(kind.commands)(remote.body) as { readonly _tag: string }
      const decided = decideHere(partition, kind, remote.key, command, { commandId: remote.commandId, at: remote.at, actor: remote.actor })
      return decided === undefined ? notOwner() as Reply : toReply(kind, await run(decided))
    }

    yield* cluster.join({
      onAssigned: (partitions) => {
        partitions.forEach(gain)
        reproject()
      },
      onRevoked: (partitions) => {
        partitions.forEach(lose)
        reproject()
      },
      onCommand
    })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        ;[...owned.keys()].forEach(lose)
        reproject()
      })
    )

    const send = <S, C extends { readonly _tag: string }, E extends { readonly _tag: string }, Err>(
      kind: ActorKind<S, C, E, Err>,
      id: string,
      command: C,
      meta: CommandMeta
    ): Effect.Effect<Accepted<S, E>, Err | HostUnavailable> => {
      const key = keyOf(kind, id)
      const partition = partitionFor(key, log.partitions)
      const until = Date.now() + options.commandTimeoutMs
      const attempt = (): Effect.Effect<Outcome, HostUnavailable> =>
        decideHere(partition, kind, key, command, meta)?.pipe(
          // the command may still be decided; a retry with its id is recognised
          Effect.timeoutFail({
            duration: Math.max(1, until - Date.now()),
            onTimeout: () => new HostUnavailable({ reason: "timeout", message: `partition ${partition} did not decide within ${options.commandTimeoutMs} ms` })
          })
        ) ??
          cluster
            .send(partition, { key, commandId: meta.commandId, at: meta.at, actor: meta.actor, body: Schema.encodeSync(kind.commands)(command) }, Math.max(1, until - Date.now()))
            .pipe(
              Effect.map((reply) => fromReply(kind, reply as Reply)),
              Effect.mapError((e) => new HostUnavailable({ reason: e.reason === "timeout" ? "timeout" : "not_owner", message: e.message }))
            )
      // ownership moves during rebalances: retry until the deadline, then give up retryably; each
      // attempt asks afresh who owns the partition (a retry bound to the first attempt's owner would
      // knock on a lost partition's door until the deadline)
      const routed: Effect.Effect<Outcome, HostUnavailable> = Effect.suspend(attempt).pipe(
        Effect.flatMap((outcome) =>
          !outcome.ok && "unavailable" in outcome && outcome.unavailable === "not_owner"
            ? Effect.fail(new HostUnavailable({ reason: "not_owner", message: outcome.message }))
            : Effect.succeed(outcome)
        ),
        Effect.catchTag("HostUnavailable", (e) =>
          Date.now() < until ? Effect.zipRight(Effect.sleep("100 millis"), Effect.suspend(() => routed)) : Effect.fail(e)
        )
      )
      return routed.pipe(
        Effect.flatMap((outcome) => accepted<S, E, Err>(outcome)),
        Effect.tap(({ position }) => {
          if (position === undefined) return Effect.void
          // what this node acknowledged, wherever it was decided, is what its reads must see
          addPosition(acked, position)
          return noteWrite(position)
        }),
        Effect.withSpan("ActorHost.send", { attributes: { key, partition, command: command._tag }, captureStackTrace: false })
      )
    }

    // read when scraped: the owned partitions as they stand, and how far each projection is behind
    // the log's end (asked of the log then: another owner's appends before this node's count too)
    const registers = [metrics.registry]
    new Gauge({
      name: "svc_partitions_owned",
      help: "Log partitions this node owns",
      registers,
      collect() {
        this.set(owned.size)
      }
    })
    new Gauge({
      name: "svc_partitions_ready",
      help: "Owned partitions caught up with the log and deciding",
      registers,
      collect() {
        let ready = 0
        for (const ownership of owned.values()) if (ownership.caughtUp) ready++
        this.set(ready)
      }
    })
    new Gauge({
      name: "svc_projection_lag_offsets",
      help: "Per owned partition: the log's end offset minus the next offset the read models will apply",
      labelNames: ["partition"],
      registers,
      async collect() {
        this.reset()
        if (owned.size === 0) return
        const ends = await run(log.endOffsets([...owned.keys()]).pipe(
          Effect.timeout(LAG_SCRAPE_TIMEOUT_MS),
          Effect.tapError((error) => Effect.logWarning("metrics: the log's end offsets could not be read; no projection lag this scrape", error)),
          Effect.option
        ))
        if (Option.isNone(ends)) return
        for (const [partition, end] of ends.value) {
          const ownership = owned.get(partition)
          if (ownership !== undefined) this.set({ partition: String(partition) }, Math.max(0, end - ownership.applied))
        }
      }
    })

    const unprojected = (): Positions => {
      const behind = new Map<number, number>()
      for (const [partition, offset] of acked) {
        const applied = owned.get(partition)?.applied ?? remoteApplied.get(partition) ?? 0
        if (offset >= applied) behind.set(partition, offset)
      }
      return behind
    }

    /** A partition projected on another node (or changing hands): its checkpoint row tells. */
    const remoteProjected = async (partition: number, offset: number, deadline: number): Promise<boolean> => {
      for (;;) {
        const next = await run(readCheckpoint(db, partition)).catch(() => 0)
        if (next > (remoteApplied.get(partition) ?? 0)) remoteApplied.set(partition, next)
        if (next > offset) return true
        const local = owned.get(partition)
        if (local?.caughtUp) return projected(local, offset, Math.max(0, deadline - Date.now()))
        if (Date.now() >= deadline) return false
        await new Promise((resolve) => setTimeout(resolve, REMOTE_CHECKPOINT_POLL_MS))
      }
    }

    const awaitProjected: ActorHostService["awaitProjected"] = async (positions, timeoutMs) => {
      const deadline = Date.now() + timeoutMs
      const waits: Array<Promise<boolean>> = []
      for (const [partition, offset] of positions) {
        const local = owned.get(partition)
        if (local !== undefined && local.caughtUp) {
          if (offset >= local.applied) waits.push(projected(local, offset, timeoutMs))
        } else if (offset >= (remoteApplied.get(partition) ?? 0)) {
          waits.push(remoteProjected(partition, offset, deadline))
        }
      }
      return (await Promise.all(waits)).every(Boolean)
    }

    return {
      nodeId: cluster.nodeId,
      send,
      ownership: () => ({
        owned: [...owned.keys()].sort((a, b) => a - b),
        ready: [...owned.values()].filter((o) => o.caughtUp).map((o) => o.partition).sort((a, b) => a - b),
        cachedKeys: [...owned.values()].reduce((n, o) => n + o.cache.size, 0)
      }),
      unprojected,
      awaitProjected,
      caughtUp: () => Promise.all([...owned.values()].map((o) => o.ready)).then((ready) => ready.every(Boolean)),
      append
    } satisfies ActorHostService
  })

const accepted = <S, E, Err>(outcome: Outcome): Effect.Effect<Accepted<S, E>, Err | HostUnavailable> => {
  if (outcome.ok) {
    return Effect.succeed({
      seq: outcome.seq,
      state: outcome.state as S,
      events: outcome.events as ReadonlyArray<E>,
      duplicate: outcome.duplicate,
      position: outcome.position
    })
  }
  if ("rejected" in outcome) return Effect.fail(outcome.rejected as Err)
  return Effect.fail(new HostUnavailable({ reason: outcome.unavailable, message: outcome.message }))
}

const toReply = (kind: AnyActorKind, outcome: Outcome): Reply => {
  if (outcome.ok) {
    return {
      ok: true,
      seq: outcome.seq,
      state: Schema.encodeSync(kind.state)(outcome.state),
      events: outcome.events.map((e) => encodeEvent(kind, e)),
      duplicate: outcome.duplicate,
      position: outcome.position ?? null
    }
  }
  if ("rejected" in outcome) return { ok: false, rejected: Schema.encodeSync(kind.errors)(outcome.rejected) }
  return outcome
}

const fromReply = (kind: AnyActorKind, reply: Reply): Outcome => {
  if (reply.ok) {
    return {
      ok: true,
      seq: reply.seq,
      state: Schema.decodeUnknownSync(kind.state)(reply.state),
      events: reply.events.map((e) => decodeEvent(kind, e.type, e.payload)),
      duplicate: reply.duplicate,
      position: reply.position ?? undefined
    }
  }
  if ("rejected" in reply) return { ok: false, rejected: Schema.decodeUnknownSync(kind.errors)(reply.rejected) }
  return reply
}

/** The folded states of `keys` in the read model (absent: never written). */
const loadActors = (db: DbService, keys: ReadonlyArray<string>) =>
  query("load actor states", async () => {
    const rows = await db.sql`
      select key, seq, state, recent_commands from ${db.table("actor_state")} where key = any(${keys as string[]}::text[])`
    return new Map<string, StoredActor>(rows.map((r) => [r.key as string, { seq: r.seq, state: r.state, recentCommands: r.recent_commands }]))
  })

const readCheckpoint = (db: DbService, partition: number) =>
  query("read checkpoint", async () => {
    const [row] = await db.sql`select next_offset from ${db.table("projection_checkpoints")} where partition = ${partition}`
    return (row?.next_offset as number | undefined) ?? 0
  })

export const layer = (options: ActorHostOptions): Layer.Layer<ActorHost, ClusterError, Db | EventLog | Cluster | ActorKinds | NodeMetrics> =>
  Layer.scoped(ActorHost, make(options))
