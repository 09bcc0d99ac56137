/**
 * The log port. Every mutation of the platform is an event appended here; read models are folds
 * of it. Two adapters implement it with one contract suite: Kafka (kafkajs) and an embedded
 * append-only table in Postgres.
 */
import { Context, Data, type Effect, type Stream } from "effect"

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

/** An event as read back from the log, with its place in it. */
export interface LoggedEvent extends EventRecord {
  readonly partition: number
  readonly offset: number
}

export type LogMode = "kafka" | "embedded"

export class LogError extends Data.TaggedError("LogError")<{
  readonly operation: string
  readonly message: string
  readonly cause?: unknown
}> {}

export interface EventLogService {
  readonly mode: LogMode
  /** Partition count of the events topic (and of the co-partitioned commands topic). */
  readonly partitions: number
  /**
   * Appends `events` to the partition of `partitionKey`, atomically and in order.
   * Returns the offset of each event.
   */
  readonly append: (
    partitionKey: string,
    events: ReadonlyArray<EventRecord>
  ) => Effect.Effect<ReadonlyArray<number>, LogError>
  /**
   * Tails the given partitions from the given offsets (partition -> first offset to read), forever.
   * Each emitted chunk holds events of one partition in offset order; chunks of one partition
   * arrive in order.
   */
  readonly subscribe: (
    from: ReadonlyMap<number, number>
  ) => Stream.Stream<ReadonlyArray<LoggedEvent>, LogError>
  /** The next offset to be written, per partition (Kafka's high watermark). */
  readonly endOffsets: (
    partitions: ReadonlyArray<number>
  ) => Effect.Effect<ReadonlyMap<number, number>, LogError>
}

export class EventLog extends Context.Tag("svc/streams/EventLog")<EventLog, EventLogService>() {}

export const allPartitions = (count: number): ReadonlyArray<number> =>
  Array.from({ length: count }, (_, partition) => partition)
