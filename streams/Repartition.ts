/**
 * `svc log repartition --partitions N`: rewrites the log into a new generation with N partitions,
 * offline (every node stopped), on either adapter: it is written against the log port alone.
 *
 * 1. The read models are brought up to the old log's end (the projection's own code), and the old
 *    log is verified (`LogVerify.ts`): a broken log is not rewritten. Its final heads are what the
 *    new log's genesis records name.
 * 2. Every partition of the new log starts with a genesis record signed with the operator's key
 *    (`Checkpoints.ts`), naming every old partition's final head.
 * 3. Every event is copied, in each old partition's offset order, to its key's partition of the new
 *    log (`partitionFor(key, N)`), through that partition's writer, so that it is chained there: a
 *    key's events keep their order and their seq. The old log's checkpoint and genesis records are
 *    not copied: they speak of the old chains, which stay where they are.
 * 4. Each new partition ends with a signed checkpoint of what was copied.
 * 5. One transaction (`Layout.switchGeneration`) moves the read models' checkpoints to the new
 *    log's end (nothing is projected again) and the reactions' offsets to where their unread
 *    events went, and makes the new generation current. The old log is not written at all.
 */
import { Effect, Layer, Stream } from "effect"
import type { KindRegistry } from "../actors/kernel.ts"
import { type AuditSignerService, isCheckpoint, isGenesis } from "./Checkpoints.ts"
import type { DbService } from "./Db.ts"
import { allPartitions, EventLog, type EventLogService, type EventRecord, type LogChunk, LogError, type PartitionWriter, readUpTo } from "./EventLog.ts"
import { type Generation, type LayoutPlace, reactionOffsets, switchGeneration } from "./Layout.ts"
import { finalHead, verifyLog } from "./LogVerify.ts"
import { partitionFor } from "./partitioner.ts"
import { projectToEnd } from "./Replay.ts"

export interface RepartitionOptions {
  readonly place: LayoutPlace
  /** The generation in use, and the one being built (recorded `building`). */
  readonly from: Generation
  readonly to: Generation
  readonly oldLog: EventLogService
  readonly newLog: EventLogService
  readonly signer: AuditSignerService
  readonly live: DbService
  readonly kinds: KindRegistry
}

export interface RepartitionStats {
  /** Events copied (the old log's checkpoints and genesis records are not). */
  readonly events: number
  /** The rewrite alone: reading the old log and appending to the new one. */
  readonly copyMillis: number
  readonly millis: number
  readonly newEnds: ReadonlyMap<number, number>
}

/** Old partitions read side by side. */
const LANES = 4
/** The most events, and bytes of payload, one append to a new partition carries (a Kafka record batch stays well under the broker's 1 MB). */
const MAX_EVENTS_PER_APPEND = 500
const MAX_BYTES_PER_APPEND = 256 * 1024
/** How long the new log's end offsets may take to show the last appends (Kafka: the last transactions' markers). */
const ENDS_WITHIN_MS = 30_000

const failed = (message: string) => new LogError({ operation: "repartition", message })

/** The old log up to its end, projected and verified: its end offsets and its partitions' final heads. */
const settleOldLog = (options: RepartitionOptions) =>
  Effect.gen(function* () {
    const { ends } = yield* projectToEnd(options.live, options.kinds)
    const reports = yield* verifyLog({ publicKey: options.signer.publicKey })
    const broken = reports.flatMap((r) => (r.break === undefined ? [] : [r.break.message]))
    if (broken.length > 0) return yield* Effect.fail(failed(`the log does not verify, so it is not rewritten: ${broken.join("; ")}`))
    const moved = reports.filter((r) => r.end !== ends.get(r.partition))
    if (moved.length > 0) return yield* Effect.fail(failed(`the log grew while it was read (partitions ${moved.map((r) => r.partition).join(", ")}): stop every node first`))
    return { ends, heads: reports.map(finalHead) }
  }).pipe(Effect.provide(Layer.succeed(EventLog, options.oldLog)))

/** Splits one partition's run of events into appends of bounded size. */
const appendsOf = (events: ReadonlyArray<EventRecord & { readonly offset: number }>) => {
  const appends: Array<Array<EventRecord & { readonly offset: number }>> = []
  let bytes = 0
  for (const event of events) {
    const size = JSON.stringify(event.payload).length + event.key.length + 200
    const last = appends[appends.length - 1]
    if (last === undefined || last.length >= MAX_EVENTS_PER_APPEND || bytes + size > MAX_BYTES_PER_APPEND) {
      appends.push([event])
      bytes = size
    } else {
      last.push(event)
      bytes += size
    }
  }
  return appends
}

/** What the copy keeps track of: events copied, and per reaction and new partition the first new offset of an event it had not read. */
interface CopyState {
  copied: number
  readonly unreacted: Map<string, Map<number, number>>
}

const copyChunk = (
  chunk: LogChunk,
  partitions: number,
  writers: ReadonlyArray<{ readonly writer: PartitionWriter; readonly lock: Effect.Semaphore }>,
  reactions: ReadonlyMap<string, ReadonlyMap<number, number>>,
  state: CopyState
) => {
  const byTarget = new Map<number, Array<(typeof chunk.events)[number]>>()
  for (const event of chunk.events) {
    if (isCheckpoint(event) || isGenesis(event)) continue
    const target = partitionFor(event.key, partitions)
    const run = byTarget.get(target) ?? []
    run.push(event)
    byTarget.set(target, run)
  }
  return Effect.forEach(
    byTarget,
    ([target, events]) => {
      const { writer, lock } = writers[target]
      return Effect.forEach(appendsOf(events), (batch) =>
        Effect.gen(function* () {
          const records = batch.map(({ key, seq, firstSeq, type, payload, at, commandId, actor }): EventRecord => ({ key, seq, firstSeq, type, payload, at, commandId, actor }))
          const offsets = yield* lock.withPermits(1)(writer.append(records))
          state.copied += records.length
          for (const [reaction, read] of reactions) {
            const from = read.get(chunk.partition)
            // a partition the reaction never read starts at the end: nothing of it is unread
            const first = from === undefined ? -1 : batch.findIndex((e) => e.offset >= from)
            if (first === -1) continue
            const unread = state.unreacted.get(reaction) ?? new Map<number, number>()
            unread.set(target, Math.min(unread.get(target) ?? Infinity, offsets[first]))
            state.unreacted.set(reaction, unread)
          }
        }), { discard: true })
    },
    { concurrency: "unbounded", discard: true }
  )
}

/** The new log's end offsets once they show every append made (`last`: each partition's last offset). */
const settledEnds = (log: EventLogService, last: ReadonlyMap<number, number>) =>
  Effect.gen(function* () {
    // Kafka: the end passes the last transaction's marker too once the coordinator has written it
    const past = log.mode === "kafka" ? 2 : 1
    const deadline = Date.now() + ENDS_WITHIN_MS
    for (;;) {
      const ends = yield* log.endOffsets(allPartitions(log.partitions))
      if ([...last].every(([p, offset]) => ends.get(p)! >= offset + past)) return ends
      if (Date.now() > deadline) return yield* Effect.fail(failed(`the new log's end offsets did not show its last appends within ${ENDS_WITHIN_MS} ms`))
      yield* Effect.sleep("50 millis")
    }
  })

/** Rewrites the log into the new generation and switches to it; see the module's comment. */
export const repartition = (options: RepartitionOptions) =>
  Effect.gen(function* () {
    const { from, to, oldLog, newLog, signer } = options
    const started = Date.now()
    const { ends, heads } = yield* settleOldLog(options)
    const reactions = yield* reactionOffsets(options.live.sql, options.live.schema)
    const writers = yield* Effect.forEach(
      allPartitions(to.partitions),
      (partition) => Effect.all({ writer: newLog.openWriter(partition), lock: Effect.makeSemaphore(1) }),
      { concurrency: 8 }
    )
    const at = new Date().toISOString()
    yield* Effect.forEach(writers, ({ writer }) =>
      writer.append([signer.genesis({ partition: writer.partition, partitions: to.partitions, generation: to.generation, previousGeneration: from.generation, heads, at })]),
      { concurrency: 8, discard: true })
    const copyStarted = Date.now()
    const state: CopyState = { copied: 0, unreacted: new Map() }
    const pending = allPartitions(from.partitions).filter((p) => ends.get(p)! > 0)
    const lanes = Array.from({ length: LANES }, (_, lane) => pending.filter((_, i) => i % LANES === lane)).filter((l) => l.length > 0)
    yield* Effect.forEach(lanes, (lane) =>
      readUpTo(oldLog, new Map(lane.map((p) => [p, 0])), ends).pipe(
        Stream.runForEach((chunk) => copyChunk(chunk, to.partitions, writers, reactions, state))
      ), { concurrency: "unbounded", discard: true })
    const copyMillis = Date.now() - copyStarted
    // each new partition ends with a signed checkpoint of what it holds
    const signedAt = new Date().toISOString()
    yield* Effect.forEach(writers, ({ writer }) => {
      const head = writer.head()!
      return writer.append([signer.record({ partition: writer.partition, offset: head.offset, head: head.hash, at: signedAt })])
    }, { concurrency: 8, discard: true })
    const newEnds = yield* settledEnds(newLog, new Map(writers.map(({ writer }) => [writer.partition, writer.head()!.offset])))
    const endsNow = yield* oldLog.endOffsets(allPartitions(from.partitions))
    if ([...ends].some(([p, end]) => endsNow.get(p) !== end)) return yield* Effect.fail(failed("the old log grew during the rewrite: stop every node and run it again"))
    const reactionsMoved = new Map([...reactions.keys()].map((reaction) => {
      const unread = state.unreacted.get(reaction)
      return [reaction, new Map(allPartitions(to.partitions).map((p) => [p, Math.min(unread?.get(p) ?? Infinity, newEnds.get(p)!)]))] as const
    }))
    yield* switchGeneration(options.place, { from, to: to.generation, liveSchema: options.live.schema, oldEnds: ends, newEnds, reactions: reactionsMoved }).pipe(
      Effect.mapError((e) => failed(e.message))
    )
    return { events: state.copied, copyMillis, millis: Date.now() - started, newEnds } satisfies RepartitionStats
  }).pipe(Effect.withSpan("Repartition.repartition"))
