/**
 * The partitions this node owns, and catching each up. On gaining a partition the host opens its
 * writer (fencing the previous owner) and projects it up to the log's end before deciding anything
 * there; on losing it the host stops deciding at once and forgets its cached states. One
 * projection runner folds every owned partition (`reproject`).
 *
 * Who needs to know which partitions are caught up and deciding (the automations engine) is told
 * as it changes (`readyChanges`), rather than asking.
 */
import { Effect, ExecutionStrategy, Exit, Fiber, Runtime, Scope, Stream } from "effect"
import { dependencyRetry } from "../Backoff.ts"
import type { Histogram } from "prom-client"
import type { DbError } from "../Db.ts"
import type { EventLog, EventLogService, PartitionWriter } from "../EventLog.ts"
import type { StoredActor } from "../Projector.ts"
import type { ProjectPartitions } from "../ProjectionWorker.ts"
import { failure, type Job, notOwner, type Outcome } from "./Outcome.ts"
import { OffsetWaiters } from "./Waiters.ts"

/** A key's state while its partition is owned here; `position`: its last event's offset, if this node appended it. */
export interface CachedActor extends StoredActor {
  readonly position: number | undefined
}

/** What one owned partition holds while this node owns it. */
export interface Ownership {
  readonly partition: number
  /** Resolves true once the writer is open and the projection has caught up with the log, false if the partition is lost first. */
  ready: Promise<boolean>
  caughtUp: boolean
  /** performance.now() when the cluster assigned the partition, until it first caught up. */
  assignedAt: number | undefined
  /**
   * The highest offset of the partition that the cached states hold everything up to: the log's
   * end when the partition last caught up, then raised by appends through this node's writer
   * (`appended`; the cache takes an append's states before it is acknowledged). -1 before the
   * first catch-up. A read that must see a position past it reads the read model instead
   * (`ActorHost.peek`).
   */
  knownThrough: number
  /** Embedded log: this node's appends past `knownThrough + 1` (first offset -> last), joined to it once the gap before them is this node's too. */
  readonly appendedAhead: Map<number, number>
  readonly scope: Scope.CloseableScope
  /** The partition's writer, in a scope of its own within `scope`, reopened after a failed append. */
  writer: { readonly writer: PartitionWriter; readonly scope: Scope.CloseableScope } | undefined
  readonly cache: Map<string, CachedActor>
  readonly queue: Array<Job>
  working: boolean
  /** Raw appends through this node's writer not yet answered. */
  appending: number
  /** Next offset the projection has applied, and who waits for it. */
  readonly projection: OffsetWaiters
  /**
   * Why catching up last failed (the log or the database is down), until it succeeds: commands
   * are then refused at once, retryably, rather than held until the command timeout.
   */
  stalled: string | undefined
  /** Events appended since the partition's last signed checkpoint, and whether one is being appended. */
  uncheckpointed: number
  checkpointing: boolean
}

export interface OwnershipOptions {
  readonly cachedKeysPerPartition: number
  readonly fencedWriterGraceMs?: number
}

export interface OwnershipEnv {
  readonly log: EventLogService
  /** Runs the projection of a set of partitions: in this thread, or in the projection worker. */
  readonly projectPartitions: ProjectPartitions
  readonly runtime: Runtime.Runtime<EventLog>
  readonly options: OwnershipOptions
  /** After each commit of this node's projection runner, for each partition it projects. */
  readonly onProjected: (partition: number, next: number) => void
  /** Observes, per partition gained, the seconds from its assignment until it first caught up. */
  readonly pauses: Histogram
  /** The partition's next offset as the read models hold it (its checkpoint), whoever projected it. */
  readonly readProjected: (partition: number) => Effect.Effect<number, DbError>
}

export const stalledOutcome = (ownership: Ownership): Outcome =>
  failure(`partition ${ownership.partition} cannot catch up with the log (${ownership.stalled}); retry`)

export type Partitions = ReturnType<typeof makeOwnership>

export const makeOwnership = ({ log, projectPartitions, runtime, options, onProjected, pauses, readProjected }: OwnershipEnv) => {
  const run = Runtime.runPromise(runtime)
  const fork = Runtime.runFork(runtime)
  const owned = new Map<number, Ownership>()
  const isOwned = (ownership: Ownership) => owned.get(ownership.partition) === ownership

  const ready = () => [...owned.values()].filter((o) => o.caughtUp).map((o) => o.partition).sort((a, b) => a - b)
  const { changed: readyChanged, changes: readyChanges } = broadcast(ready)

  const evict = (ownership: Ownership) => evictProjected(ownership, options.cachedKeysPerPartition)

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
        // the previous owner has usually projected the partition to its end already (a leaving
        // node does before it leaves): then it is caught up without waiting for this node's
        // projection runner, which a gain restarts, to start reading the log (unread: it waits for it)
        const projected = end === 0 ? 0 : yield* Effect.orElseSucceed(readProjected(ownership.partition), () => 0)
        if (projected > ownership.projection.next) ownership.projection.advance(projected)
        const caughtUp = end === 0 || (yield* Effect.promise(() => ownership.projection.wait(end - 1)))
        if (caughtUp && isOwned(ownership)) {
          // the cache was empty (gained) or cleared (resync): what it loads from now on is projected through end - 1
          ownership.knownThrough = Math.max(ownership.knownThrough, end - 1)
          ownership.appendedAhead.clear()
          ownership.caughtUp = true
          if (ownership.assignedAt !== undefined) pauses.observe((performance.now() - ownership.assignedAt) / 1000)
          ownership.assignedAt = undefined
          readyChanged()
        }
        ownership.stalled = undefined
        return ownership.caughtUp
      }).pipe(
        Effect.tapError((error) =>
          Effect.zipRight(Effect.sync(() => stall(ownership, error.message)), Effect.logWarning(`partition ${ownership.partition}: catching up failed; retrying`, error))
        ),
        Effect.retry({ schedule: dependencyRetry, while: () => isOwned(ownership) }),
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
    readyChanged()
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
      if (isOwned(ownership) && fenced !== undefined && ownership.writer === fenced) resync(ownership, true)
    }, options.fencedWriterGraceMs ?? 5_000).unref()

  const gain = (partition: number) => {
    if (owned.has(partition)) return
    stopLingering(partition)
    gained()
    const ownership: Ownership = {
      partition,
      ready: Promise.resolve(false),
      caughtUp: false,
      assignedAt: performance.now(),
      knownThrough: -1,
      appendedAhead: new Map(),
      scope: Effect.runSync(Scope.make()),
      writer: undefined,
      cache: new Map(),
      queue: [],
      working: false,
      appending: 0,
      projection: new OffsetWaiters(),
      stalled: undefined,
      uncheckpointed: 0,
      checkpointing: false
    }
    owned.set(partition, ownership)
    ownership.ready = catchUp(ownership)
  }

  const lose = (partition: number) => {
    const ownership = owned.get(partition)
    if (ownership === undefined) return
    owned.delete(partition)
    linger(partition)
    ownership.caughtUp = false
    readyChanged()
    // what the worker is deciding, and the raw appends under way, finish before the writer closes:
    // each commits, or is refused by the new owner's fence (a known outcome, retried there), where
    // closing the writer under them would leave their outcome unknown
    void untilIdle(ownership).then(() => fork(Scope.close(ownership.scope, Exit.void)))
    ownership.projection.settleAll(false)
    // queued commands are answered by the worker, which finds the partition gone
    if (!ownership.working) for (const job of ownership.queue.splice(0)) job.settle(notOwner())
  }

  const { reproject, linger, stopLingering, forgetLost, gained } = makeProjectionRunner({ projectPartitions, fork, owned, onProjected, evict, stall })

  const appended = (ownership: Ownership, offsets: ReadonlyArray<number>) => noteAppended(ownership, offsets, log.mode)

  /**
   * A node about to leave the cluster on purpose hands its partitions over: from now on it takes no
   * new command or append (each is answered as by a node that does not own the partition, and its
   * sender retries on the next owner), while what it already took is decided and appended. Once
   * that is done (`idle`), closing its writers cuts off nothing, so no caller is told "outcome
   * unknown" for a handover the cluster planned.
   */
  let handingOver = false
  const handOver = () => {
    handingOver = true
  }
  const idle = () => [...owned.values()].every((o) => !o.working && o.queue.length === 0 && o.appending === 0)

  return { owned, isOwned, ready, readyChanges, gain, lose, forgetLost, reproject, resync, stall, evict, appended, handOver, handingOver: () => handingOver, idle }
}

/**
 * After an append through this node's writer, once the cache holds its states: the cache holds
 * everything up to its last offset when nobody else can have written to the partition since
 * what it knew. On Kafka the writer is fenced by any newer one, so an append that succeeds says
 * so. The embedded log fences per key only (a second process believing it owns the partition
 * appends too), so there the cache is known through an append only once every offset before it
 * is this node's too (appends answered out of order wait in `appendedAhead`); after a gap another
 * process wrote, it stays known only as far as before, and reads past it go to the read models.
 */
const noteAppended = (ownership: Ownership, offsets: ReadonlyArray<number>, mode: EventLogService["mode"]) => {
  const first = offsets[0]
  const last = offsets[offsets.length - 1]
  if (first === undefined || last === undefined || last <= ownership.knownThrough) return
  if (mode !== "embedded") {
    ownership.knownThrough = last
    return
  }
  const ahead = ownership.appendedAhead
  ahead.set(first, last)
  for (let joined = ahead.get(ownership.knownThrough + 1); joined !== undefined; joined = ahead.get(ownership.knownThrough + 1)) {
    ahead.delete(ownership.knownThrough + 1)
    ownership.knownThrough = joined
  }
  // a gap that is not this node's never closes: what waits behind it is forgotten, not kept forever
  if (ahead.size > 1_024) ahead.clear()
}

interface ProjectionRunnerEnv {
  readonly projectPartitions: ProjectPartitions
  readonly fork: (effect: Effect.Effect<unknown, unknown, EventLog>) => Fiber.RuntimeFiber<unknown, unknown>
  readonly owned: ReadonlyMap<number, Ownership>
  readonly onProjected: (partition: number, next: number) => void
  readonly evict: (ownership: Ownership) => void
  readonly stall: (ownership: Ownership, why: string) => void
}

/**
 * One projection runner folds every owned partition: what arrives together from several
 * partitions goes in one transaction, where a runner per partition would pay a transaction's
 * fixed cost (about ten statements) for each partition's few events. Restarted when the set it
 * projects changes, or a partition was gained.
 */
const makeProjectionRunner = ({ projectPartitions, fork, owned, onProjected, evict, stall }: ProjectionRunnerEnv) => {
  let projector: { readonly partitions: string; readonly fiber: Fiber.RuntimeFiber<unknown, unknown> } | undefined
  /** A partition was gained since the runner started: a new runner tells its waiters where it stands. */
  let projectorStale = false
  /**
   * Runners replaced by a newer one, still projecting until it reads the log: a new runner first
   * joins the log's reader group, which takes a second or more on a busy machine, and stopping the
   * old one at once left every partition that stays unprojected meanwhile (reads waiting on it).
   */
  const retiring = new Set<Fiber.RuntimeFiber<unknown, unknown>>()
  const retire = (fiber: Fiber.RuntimeFiber<unknown, unknown>) => {
    retiring.add(fiber)
    setTimeout(() => stop(fiber), RUNNER_OVERLAP_MS).unref()
  }
  const stop = (fiber: Fiber.RuntimeFiber<unknown, unknown>) => {
    if (retiring.delete(fiber)) fork(Fiber.interrupt(fiber))
  }
  /**
   * Partitions lost within the last LOST_PROJECTION_GRACE_MS, still projected here. A partition
   * that moves is projected by its new owner only once that owner has opened its writer and
   * caught up; what this node acknowledged just before must still reach the read models
   * meanwhile, or reads that must see it wait out the handover. Two runners of a partition are
   * safe: the later finds the checkpoint moved and skips.
   */
  const lingering = new Map<number, ReturnType<typeof setTimeout>>()
  const linger = (partition: number) => {
    stopLingering(partition)
    lingering.set(partition, setTimeout(() => {
      lingering.delete(partition)
      reproject()
    }, LOST_PROJECTION_GRACE_MS).unref())
  }
  const stopLingering = (partition: number) => {
    clearTimeout(lingering.get(partition))
    lingering.delete(partition)
  }
  /** The node stops: lost partitions are not projected any longer. */
  const forgetLost = () => [...lingering.keys()].forEach(stopLingering)
  const reproject = () => {
    const partitions = [...new Set([...owned.keys(), ...lingering.keys()])].sort((a, b) => a - b)
    if (projector?.partitions === partitions.join(",") && !projectorStale) return
    projectorStale = false
    if (projector !== undefined) retire(projector.fiber)
    // nothing left to project (the node stops): no runner goes on
    if (partitions.length === 0) [...retiring].forEach(stop)
    // a runner's first word on a partition is where it starts; any later one follows a batch it read
    const started = new Set<number>()
    projector = partitions.length === 0 ? undefined : {
      partitions: partitions.join(","),
      fiber: fork(projectPartitions(partitions, (partition, next) => {
        if (started.has(partition)) [...retiring].forEach(stop)
        started.add(partition)
        const ownership = owned.get(partition)
        // two runners overlap while one retires: the projection only moves forward
        if (ownership !== undefined && next > ownership.projection.next) {
          ownership.projection.advance(next)
          evict(ownership)
        }
        onProjected(partition, next)
      }, (failure) => {
        // a partition catching up waits on the projection: it is stalled too
        for (const ownership of owned.values()) if (!ownership.caughtUp) stall(ownership, failure.message)
        if (failure.databaseUnreachable) for (const ownership of owned.values()) ownership.projection.letReadsGo()
      }))
    }
  }

  return { reproject, linger, stopLingering, forgetLost, gained: () => { projectorStale = true } }
}

/** How long a replaced projection runner goes on at most, if its successor has read nothing from the log by then. */
const RUNNER_OVERLAP_MS = 10_000
/** How long a lost partition is still projected here (its new owner catches up within it). */
const LOST_PROJECTION_GRACE_MS = 10_000
/** How long a lost partition's work under way may take before its writer closes anyway. */
const LOST_WORK_GRACE_MS = 15_000
const LOST_WORK_POLL_MS = 10

/** Resolves once the partition's worker and raw appends are idle (at once if they are), or after the grace. */
const untilIdle = async (ownership: Ownership) => {
  const deadline = Date.now() + LOST_WORK_GRACE_MS
  while ((ownership.working || ownership.appending > 0) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, LOST_WORK_POLL_MS))
}

/**
 * Past the bound the least recent keys go, but only those whose last event the projection holds:
 * a key reloads from `actor_state`, which must not be behind what this node acknowledged.
 */
const evictProjected = (ownership: Ownership, bound: number) => {
  if (ownership.cache.size <= bound) return
  for (const [key, actor] of ownership.cache) {
    if (ownership.cache.size <= bound) break
    if (actor.position === undefined || actor.position < ownership.projection.next) ownership.cache.delete(key)
  }
}

/** Tells each subscriber `current()` as it stands, then again each time `changed` finds it changed. */
const broadcast = (current: () => ReadonlyArray<number>) => {
  const listeners = new Set<(now: ReadonlyArray<number>) => void>()
  let told = ""
  const changed = () => {
    const now = current()
    if (now.join(",") === told) return
    told = now.join(",")
    for (const listener of listeners) listener(now)
  }
  const changes: Stream.Stream<ReadonlyArray<number>> = Stream.asyncPush<ReadonlyArray<number>>((emit) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const listener = (now: ReadonlyArray<number>) => void emit.single(now)
        listeners.add(listener)
        emit.single(current())
        return listener
      }),
      (listener) => Effect.sync(() => listeners.delete(listener))
    ), { bufferSize: "unbounded" })
  return { changed, changes }
}
