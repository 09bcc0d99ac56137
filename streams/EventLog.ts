/**
 * The log port. Every mutation of the platform is an event appended here; read models are folds
 * of it. Two adapters implement it with one contract suite: Kafka (kafkajs) and an embedded
 * append-only table in Postgres.
 */
import { Context, Data, type Effect, type Scope, Stream } from "effect"

/** An event as the actor host writes it. `seq` is per key, gap-free, starting at 1. */
export interface EventRecord {
  readonly key: string
  readonly seq: number
  /**
   * The seq of the first event its command appended. A command's events are contiguous, and
   * readers apply them all or none: this marks where each command starts.
   */
  readonly firstSeq: number
  readonly type: string
  readonly payload: unknown
  /** ISO 8601 time of the causing command (time comes in the command, never from a clock here). */
  readonly at: string
  readonly commandId: string
  /** Who: `user:<id>`, `key:<id>` or `system`. */
  readonly actor: string
}

/**
 * An event as read back from the log, with its place in it. A partition's offsets increase with
 * every append but may have gaps: Kafka gives offsets to transaction markers and to refused
 * appends' records too, which readers never see.
 */
export interface LoggedEvent extends EventRecord {
  readonly partition: number
  readonly offset: number
  /**
   * The hash chain (`Chain.ts`, docs/audit.md): the hash of the partition's event before this one,
   * and this event's own. Null on an event the log holds without them (one written before the log
   * was chained, or one the platform never wrote); the writer sets them, a reader only reports them.
   */
  readonly prev: string | null
  readonly hash: string | null
}

/** A run of one partition's log as a subscription delivers it. */
export interface LogChunk {
  readonly partition: number
  /** In offset order; may be empty when the log moved past records that are no events (Kafka's transaction markers). */
  readonly events: ReadonlyArray<LoggedEvent>
  /** Where reading goes on: past this chunk's events and past whatever the log holds between and after them. */
  readonly next: number
}

export type LogMode = "kafka" | "embedded"

export class LogError extends Data.TaggedError("LogError")<{
  readonly operation: string
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * The log refused an append because another writer holds the partition (Kafka: a newer owner's
 * transactional producer fenced this one) or wrote the key's next seq first (embedded). Nothing of
 * the refused append is in the log.
 */
export class LogFenced extends Data.TaggedError("LogFenced")<{
  readonly partition: number
  readonly message: string
}> {}

/** The single writer of one partition, opened by the node that owns it. */
export interface PartitionWriter {
  readonly partition: number
  /**
   * Appends `events` to the partition, atomically and in order; succeeds once they are durable,
   * with the offset of each (consecutive within one append). Refused with `LogFenced` once another
   * writer has taken the partition or a key's seq.
   */
  readonly append: (events: ReadonlyArray<EventRecord>) => Effect.Effect<ReadonlyArray<number>, LogError | LogFenced>
  /** The last event this process appended to the partition: its offset and chain hash (a signed checkpoint names them). */
  readonly head: () => { readonly offset: number; readonly hash: string } | undefined
}

export interface EventLogService {
  readonly mode: LogMode
  /** Partition count of the events topic (and of the co-partitioned commands topic). */
  readonly partitions: number
  /**
   * Appends `events` to the partition of `partitionKey`, atomically and in order, through no
   * partition writer (on Kafka, not fenced).
   * Returns the offset of each event (consecutive within one append).
   */
  readonly append: (
    partitionKey: string,
    events: ReadonlyArray<EventRecord>
  ) => Effect.Effect<ReadonlyArray<number>, LogError>
  /**
   * Tails the given partitions from the given offsets (partition -> first offset to read), forever.
   * Chunks of one partition arrive in order; a chunk's `next` is how far the reader has got, which
   * is what reaching `endOffsets` is measured by (an event's offset + 1 may stop short of it).
   */
  readonly subscribe: (from: ReadonlyMap<number, number>) => Stream.Stream<LogChunk, LogError>
  /**
   * Opens this node's writer of `partition`, for as long as the scope lasts. Opening it fences
   * every earlier writer of the partition (Kafka); the embedded log checks each key's next seq in
   * the append's own statement.
   */
  readonly openWriter: (partition: number) => Effect.Effect<PartitionWriter, LogError, Scope.Scope>
  /**
   * The next offset to be written, per partition (Kafka's high watermark). It may lie past the
   * last event: a reader has reached it when a chunk's `next` has.
   */
  readonly endOffsets: (
    partitions: ReadonlyArray<number>
  ) => Effect.Effect<ReadonlyMap<number, number>, LogError>
}

export class EventLog extends Context.Tag("svc/streams/EventLog")<EventLog, EventLogService>() {}

export const allPartitions = (count: number): ReadonlyArray<number> =>
  Array.from({ length: count }, (_, partition) => partition)

/**
 * The log from `from` up to `ends` (partition -> offset, exclusive), as it stood then: chunks cut
 * at `ends`, and the stream ends once every partition has reached its end.
 */
export const readUpTo = (
  log: EventLogService,
  from: ReadonlyMap<number, number>,
  ends: ReadonlyMap<number, number>
): Stream.Stream<LogChunk, LogError> =>
  Stream.suspend(() => {
    const endOf = (partition: number) => ends.get(partition) ?? 0
    const pending = new Map([...from].filter(([partition, offset]) => offset < endOf(partition)))
    if (pending.size === 0) return Stream.empty
    const unreached = new Set(pending.keys())
    return log.subscribe(pending).pipe(
      Stream.filter((chunk) => unreached.has(chunk.partition)),
      Stream.map((chunk): LogChunk => {
        const end = endOf(chunk.partition)
        return chunk.next <= end
          ? chunk
          : { partition: chunk.partition, events: chunk.events.filter((e) => e.offset < end), next: end }
      }),
      Stream.takeUntil((chunk) => {
        if (chunk.next >= endOf(chunk.partition)) unreached.delete(chunk.partition)
        return unreached.size === 0
      })
    )
  })
