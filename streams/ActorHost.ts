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
 * A read of one key may answer from this node's cached state instead of a read model (`peek`):
 * only on the owner, caught up, and only when the cache holds every position the read must see.
 *
 * Records that no actor decides (audit records, telemetry batches, keys `svc issue-key` writes)
 * are appended through the same writer (`append`): a partition's hash chain (docs/audit.md) needs
 * one writer, and on Kafka that is the owner's fenced writer, which holds the chain's head.
 *
 * This module is the service; its parts live in `host/`: `Ownership.ts` (owned partitions,
 * catching up, the projection runner), `PartitionWorker.ts` (decide, append, answer),
 * `Appender.ts` (the raw append), `Router.ts` (commands and appends owned elsewhere),
 * `AuditCheckpoints.ts` (signed checkpoints), `Waiters.ts` and `RemoteProjections.ts` (waits for
 * projected positions, settled as the projection moves), `Gauges.ts`, `Outcome.ts`.
 */
import { Context, Effect, FiberRef, Layer, Option, type Stream } from "effect"
import { type ActorKind, type CommandMeta, type KindRegistry, keyOf } from "../actors/kernel.ts"
import { Db } from "./Db.ts"
import { Cluster, type ClusterError } from "./Cluster.ts"
import { AuditSigner } from "./Checkpoints.ts"
import { EventLog, type EventRecord, type LogError } from "./EventLog.ts"
import { NodeMetrics } from "./Metrics.ts"
import { CurrentReadFence, type Positions } from "./ReadFence.ts"
import { partitionFor } from "./partitioner.ts"
import { readCheckpoints } from "./Projector.ts"
import { inThread, ProjectionRunner } from "./ProjectionWorker.ts"
import { makeAppendHere } from "./host/Appender.ts"
import { makeAuditCheckpoints } from "./host/AuditCheckpoints.ts"
import { makeGate } from "./Admission.ts"
import { registerGauges } from "./host/Gauges.ts"
import type { Accepted, HostUnavailable } from "./host/Outcome.ts"
import { makeOwnership } from "./host/Ownership.ts"
import { makePartitionWorker } from "./host/PartitionWorker.ts"
import * as RemoteProjections from "./host/RemoteProjections.ts"
import { makeRouter } from "./host/Router.ts"

export { type Accepted, HostUnavailable } from "./host/Outcome.ts"

export interface ActorHostService {
  readonly nodeId: string
  readonly send: <S, C extends { readonly _tag: string }, E extends { readonly _tag: string }, Err>(
    kind: ActorKind<S, C, E, Err>,
    id: string,
    command: C,
    meta: CommandMeta
  ) => Effect.Effect<Accepted<S, E>, Err | HostUnavailable>
  /**
   * The state of `id` as this node holds it in memory, without a command and without I/O: the
   * state as of the last append acknowledged for it, which is what a read after any acknowledged
   * write must see. Only when this node owns the key's partition, the partition is caught up and
   * not stalled, its cache holds every position of that partition in `mustSee` (a read-your-writes
   * fence), and the key's state is cached; otherwise undefined, and the read model answers.
   */
  readonly peek: <S>(kind: Pick<ActorKind<S, never, never, never>, "kind" | "initialState">, id: string, mustSee?: Positions) => S | undefined
  /** Partitions this node owns, those of them caught up and deciding, and how many keys it caches. */
  readonly ownership: () => { readonly owned: ReadonlyArray<number>; readonly ready: ReadonlyArray<number>; readonly cachedKeys: number }
  /** The partitions caught up and deciding (`ownership().ready`): as they stand, then at each change. */
  readonly readyChanges: Stream.Stream<ReadonlyArray<number>>
  /** The positions of the commands this node acknowledged that the read models may not hold yet. */
  readonly unprojected: () => Positions
  /** Resolves once every partition owned now has caught up with the log (false: one was lost first). */
  readonly caughtUp: () => Promise<boolean>
  /** Resolves true once the read models have passed every position, false if `timeoutMs` passes first. */
  readonly awaitProjected: (positions: Positions, timeoutMs: number) => Promise<boolean>
  /**
   * What a read that named no position may have: resolves once the read models have passed the
   * positions of partitions that are not moving, or `timeoutMs` has passed. A partition this node
   * gained and is catching up, or whose owner elsewhere last refused or did not answer this
   * node's command, is moving: its projection waits for a rebalance to end, and is not waited for.
   */
  readonly awaitSettled: (positions: Positions, timeoutMs: number) => Promise<void>
  /**
   * Appends records no actor decides to `partition` through its single writer (this node's when
   * it owns the partition, else its owner's, reached through the cluster), so that they join the
   * partition's hash chain; the offset of each once durable. Retried while ownership moves, until
   * the command timeout.
   */
  readonly append: (partition: number, records: ReadonlyArray<EventRecord>) => Effect.Effect<ReadonlyArray<number>, LogError>
  /**
   * Before a planned leave: take no more commands or appends (their senders retry on the next
   * owner) and finish those taken, within `timeoutMs`. Whether all finished.
   */
  readonly handOver: (timeoutMs: number) => Promise<boolean>
}

export class ActorHost extends Context.Tag("svc/streams/ActorHost")<ActorHost, ActorHostService>() {}

export class ActorKinds extends Context.Tag("svc/streams/ActorKinds")<ActorKinds, KindRegistry>() {}

export interface ActorHostOptions {
  readonly commandTimeoutMs: number
  /** How many keys' states each owned partition keeps in memory. */
  readonly cachedKeysPerPartition: number
  /**
   * How long a writer told it is fenced waits for the partition to be taken from this node before
   * it opens again: longer than a heartbeat of the cluster (by default half Kafka's 10 s session).
   */
  readonly fencedWriterGraceMs?: number
  /**
   * Commands this node's partition workers hold at once (queued or being decided); one more is
   * refused at once, retryably (`HostUnavailable` `overloaded`), rather than held past the command
   * timeout. Unset: unbounded.
   */
  readonly maxQueuedCommands?: number
}

const HAND_OVER_POLL_MS = 10

export const make = (options: ActorHostOptions) =>
  Effect.gen(function* () {
    const db = yield* Db
    const log = yield* EventLog
    const cluster = yield* Cluster
    const kinds = yield* ActorKinds
    const metrics = yield* NodeMetrics
    const signer = Option.getOrUndefined(yield* Effect.serviceOption(AuditSigner))
    const runtime = yield* Effect.runtime<EventLog>()
    const { commandTimeoutMs } = options
    /** The highest offset of the commands this node acknowledged (decided here or by another owner), per partition. */
    const acked = new Map<number, number>()
    /** Partitions projected elsewhere, or here before they caught up: told by the projectors, never polled. */
    const remote = yield* RemoteProjections.make(db, { listen: log.mode !== "embedded" })

    // in a worker when the node runs one (`ProjectionWorker.ts`), else in this thread on the projection's pool
    const projectPartitions = Option.getOrElse(yield* Effect.serviceOption(ProjectionRunner), () => inThread(db.projection, kinds))
    const partitions = makeOwnership({
      log,
      projectPartitions,
      runtime,
      options,
      onProjected: remote.notice,
      pauses: metrics.rebalancePauseSeconds,
      readProjected: (partition) => Effect.map(readCheckpoints(db, [partition]), (next) => next.get(partition) ?? 0)
    })
    const { owned } = partitions
    const audit = makeAuditCheckpoints(signer, partitions, runtime)
    if (signer !== undefined) yield* Effect.forkScoped(audit.ticker)
    const queued = options.maxQueuedCommands === undefined ? undefined : makeGate("queued_commands", options.maxQueuedCommands)
    const { decideHere } = makePartitionWorker({ db, kinds, metrics, runtime, partitions, counted: audit.counted, acked, commandTimeoutMs, queued })
    const appendHere = makeAppendHere({ log, runtime, partitions, counted: audit.counted, acked, commandTimeoutMs })
    const router = makeRouter({ partitionCount: log.partitions, cluster, kinds, runtime, decideHere, appendHere, acked, commandTimeoutMs })

    yield* cluster.join({
      onAssigned: (assigned) => {
        metrics.rebalances.inc({ change: "assigned" })
        assigned.forEach(partitions.gain)
        partitions.reproject()
      },
      onRevoked: (revoked) => {
        metrics.rebalances.inc({ change: "revoked" })
        revoked.forEach(partitions.lose)
        partitions.reproject()
      },
      onCommand: router.onCommand
    })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        ;[...owned.keys()].forEach(partitions.lose)
        partitions.forgetLost()
        partitions.reproject()
      })
    )
    registerGauges(metrics, db, log, owned, runtime, queued)

    const unprojected = (): Positions => {
      const behind = new Map<number, number>()
      for (const [partition, offset] of acked) {
        const applied = owned.get(partition)?.projection.next ?? remote.applied(partition)
        if (offset >= applied) behind.set(partition, offset)
      }
      return behind
    }

    const awaitProjected: ActorHostService["awaitProjected"] = async (positions, timeoutMs) => {
      const waits: Array<Promise<boolean>> = []
      for (const [partition, offset] of positions) {
        const local = owned.get(partition)
        if (local !== undefined && local.caughtUp) {
          if (offset >= local.projection.next) waits.push(local.projection.wait(offset, timeoutMs))
        } else if (offset >= remote.applied(partition)) {
          // projected on another node, or changing hands: its projector's commit settles it
          waits.push(remote.wait(partition, offset, timeoutMs))
        }
      }
      return (await Promise.all(waits)).every(Boolean)
    }

    const awaitSettled: ActorHostService["awaitSettled"] = async (positions, timeoutMs) => {
      const settled = new Map<number, number>()
      for (const [partition, offset] of positions) {
        const local = owned.get(partition)
        if (local === undefined ? !router.moving(partition) : local.caughtUp) settled.set(partition, offset)
      }
      await awaitProjected(settled, timeoutMs)
    }

    const peek: ActorHostService["peek"] = <S>(kind: Pick<ActorKind<S, never, never, never>, "kind" | "initialState">, id: string, mustSee?: Positions) => {
      const key = keyOf(kind, id)
      const partition = partitionFor(key, log.partitions)
      const ownership = owned.get(partition)
      if (ownership === undefined || !ownership.caughtUp || ownership.stalled !== undefined) return undefined
      const wanted = mustSee?.get(partition)
      if (wanted !== undefined && wanted > ownership.knownThrough) return undefined
      return ownership.cache.get(key)?.state as S | undefined
    }

    return {
      nodeId: cluster.nodeId,
      send: router.send,
      peek,
      ownership: () => ({
        owned: [...owned.keys()].sort((a, b) => a - b),
        ready: partitions.ready(),
        cachedKeys: [...owned.values()].reduce((n, o) => n + o.cache.size, 0)
      }),
      readyChanges: partitions.readyChanges,
      unprojected,
      awaitProjected,
      awaitSettled,
      caughtUp: () => Promise.all([...owned.values()].map((o) => o.ready)).then((ready) => ready.every(Boolean)),
      append: router.append,
      handOver: async (timeoutMs) => {
        partitions.handOver()
        const deadline = Date.now() + timeoutMs
        while (!partitions.idle() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, HAND_OVER_POLL_MS))
        return partitions.idle()
      }
    } satisfies ActorHostService
  })

/**
 * `peek` under the current invocation's read fence: the cached state of `id` only when it holds
 * every write the invocation must see (its positions, those it wrote included); undefined: read
 * the read model, which waits for them.
 */
export const peekFenced = <S>(kind: Pick<ActorKind<S, never, never, never>, "kind" | "initialState">, id: string): Effect.Effect<S | undefined, never, ActorHost> =>
  Effect.flatMap(ActorHost, (host) => Effect.map(FiberRef.get(CurrentReadFence), (fence) => host.peek(kind, id, fence?.positions)))

export const layer = (options: ActorHostOptions): Layer.Layer<ActorHost, ClusterError, Db | EventLog | Cluster | ActorKinds | NodeMetrics> =>
  Layer.scoped(ActorHost, make(options))
