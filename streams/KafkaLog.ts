/**
 * The Kafka adapter of the log (kafkajs). Events live in `<prefix>.events`, co-partitioned with
 * `<prefix>.commands` (same partition count, Kafka's murmur2 partitioner on the actor key).
 *
 * An event on the wire: message key = the event's `key`; value = the JSON array
 * `[seq, firstSeq, type, at, commandId, actor, payload]` (positional, so the field names are not repeated in
 * every record); partition and offset are Kafka's; the hash chain (docs/audit.md) in the headers
 * `svc-prev` and `svc-hash`, set by the partition's writer.
 *
 * The kafkajs plumbing the cluster adapter shares (client, topic creation, tailing fixed
 * partitions) is exported from here too.
 */
import { Effect, Either, Exit, Layer, Queue, Runtime, Schema, type Scope, Stream, Take } from "effect"
import kafkajs from "kafkajs"
import type { Admin, Kafka, KafkaMessage, LogEntry, PartitionAssigner } from "kafkajs"
import { randomUUID } from "node:crypto"
import {
  EventLog,
  type EventLogService,
  type EventRecord,
  type LogChunk,
  LogError,
  LogFenced,
  type LoggedEvent,
  type PartitionWriter
} from "./EventLog.ts"
import * as GroupCommit from "./GroupCommit.ts"
import { chain, GENESIS } from "./Chain.ts"
import { partitionFor } from "./partitioner.ts"

const { AssignerProtocol, Kafka: KafkaClient, Partitioners, logLevel } = kafkajs

export interface KafkaLogConfig {
  readonly brokers: ReadonlyArray<string>
  /** Topic prefix: `<prefix>.commands` and `<prefix>.events`. */
  readonly prefix: string
  readonly partitions: number
  readonly clientId: string
  /**
   * False: partition writers append without the hash chain (no headers, no head read), only to
   * measure what the chain costs (bench/log.ts). The platform always chains.
   */
  readonly chained?: boolean
  /**
   * How long a partition writer's transaction, once an append is waiting, waits for more appends
   * to join it (KAFKA_APPEND_LINGER_MS; default DEFAULT_APPEND_LINGER_MS). 0: it begins at once.
   */
  readonly lingerMs?: number
}

/** The linger of a partition writer's transaction (docs/decisions.md, "Issue 24: Kafka appends in wider transactions"). */
export const DEFAULT_APPEND_LINGER_MS = 2

export const topicsOf = (prefix: string) => ({
  commands: `${prefix}.commands`,
  events: `${prefix}.events`
})

const fail = (operation: string) => (cause: unknown) =>
  new LogError({ operation, message: `${operation} failed: ${cause instanceof Error ? cause.message : String(cause)}`, cause })

const tryKafka = <A>(operation: string, run: () => Promise<A>): Effect.Effect<A, LogError> =>
  Effect.tryPromise({ try: run, catch: fail(operation) })

/** kafkajs logs through Effect's logger, warnings and errors only. */
export const makeClient = (brokers: ReadonlyArray<string>, clientId: string): Effect.Effect<Kafka> =>
  Effect.map(Effect.runtime<never>(), (runtime) => {
    const runSync = Runtime.runSync(runtime)
    return new KafkaClient({
      clientId,
      brokers: [...brokers],
      logLevel: logLevel.WARN,
      logCreator: () => (entry) => runSync(logEntry(entry))
    })
  })

/**
 * Failures kafkajs logs that are routine for a partition's writer: a transaction that starts while
 * the broker still writes the markers of the one before is refused (CONCURRENT_TRANSACTIONS) and
 * retried; a writer fenced by a newer owner is told its epoch is old (reported as LogFenced).
 */
const ROUTINE_FAILURES = ["another concurrent operation on the same transaction", "an operation with an old epoch"]

const logEntry = ({ namespace, level, log: { message, timestamp: _timestamp, logger: _logger, ...fields } }: LogEntry) => {
  // kafkajs logs each failed request at error level and then retries it; what finally fails is
  // reported by the operation that called it
  const routine = namespace === "Connection" || ROUTINE_FAILURES.some((failure) => message.includes(failure))
  const log = routine ? Effect.logDebug : level === logLevel.ERROR ? Effect.logError : Effect.logWarning
  return log(`kafkajs ${namespace}: ${message}`).pipe(Effect.annotateLogs(fields))
}

export interface TopicSpec {
  readonly topic: string
  readonly partitions: number
  readonly config?: Readonly<Record<string, string>>
}

/**
 * Commands are worth nothing once their sender has given up; a day covers any catch-up. (A group
 * that lost its offsets re-reads what is left, which the host dedupes by command id.)
 */
export const commandsTopicSpec = (prefix: string, partitions: number): TopicSpec => ({
  topic: topicsOf(prefix).commands,
  partitions,
  config: { "retention.ms": String(24 * 60 * 60 * 1000) }
})

/**
 * Creates the topics that are missing and checks the partition count of those that exist, since a
 * different count would move keys to other partitions.
 */
export const ensureTopics = async (admin: Admin, specs: ReadonlyArray<TopicSpec>): Promise<void> => {
  // one topic per request: with several, kafkajs stops waiting for leaders once one already exists
  for (const spec of specs) {
    await untilLeadersKnown(() =>
      admin.createTopics({
        waitForLeaders: true,
        topics: [
          {
            topic: spec.topic,
            numPartitions: spec.partitions,
            configEntries: Object.entries(spec.config ?? {}).map(([name, value]) => ({ name, value }))
          }
        ]
      })
    )
  }
  const { topics } = await untilLeadersKnown(() => admin.fetchTopicMetadata({ topics: specs.map((spec) => spec.topic) }))
  for (const spec of specs) {
    const found = topics.find((topic) => topic.name === spec.topic)?.partitions.length
    if (found !== spec.partitions) {
      throw new Error(`topic ${spec.topic} has ${found} partitions, configured ${spec.partitions}`)
    }
  }
}

/** How long topic creation waits for a new topic's leaders to be known. */
const LEADERS_KNOWN_WITHIN_MS = 30_000

/**
 * kafkajs on a KRaft broker can read a new topic's metadata before its partitions have leaders and
 * fail with UNKNOWN_TOPIC_OR_PARTITION ("This server does not host this topic-partition") or
 * LEADER_NOT_AVAILABLE (tulios/kafkajs#1563, #815); the same call goes through a moment later.
 */
const untilLeadersKnown = async <A>(attempt: () => Promise<A>): Promise<A> => {
  const deadline = Date.now() + LEADERS_KNOWN_WITHIN_MS
  for (let delay = 50; ; delay = Math.min(delay * 2, 1_000)) {
    try {
      return await attempt()
    } catch (error) {
      const type = (error as { type?: string }).type
      const message = error instanceof Error ? error.message : String(error)
      const leaderless = type === "UNKNOWN_TOPIC_OR_PARTITION" || type === "LEADER_NOT_AVAILABLE" || /does not host this topic-partition|leader/i.test(message)
      if (!leaderless || Date.now() + delay > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, delay))
    }
  }
}

export interface PartitionBatch {
  readonly partition: number
  /** In offset order: the committed data records (no transaction markers, nothing aborted). */
  readonly messages: ReadonlyArray<KafkaMessage>
  /** The offset to read next, past the batch's transaction markers and aborted records too. */
  readonly next: number
}

/** Gives every member (there is one) exactly `partitions` of `topic`. */
const fixedAssigner =
  (topic: string, partitions: ReadonlyArray<number>): PartitionAssigner =>
  () => ({
    name: "svc-fixed",
    version: 0,
    protocol: ({ topics }) => ({
      name: "svc-fixed",
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) })
    }),
    assign: async ({ members }) =>
      members.map(({ memberId }) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 0,
          assignment: { [topic]: [...partitions] },
          userData: Buffer.alloc(0)
        })
      }))
  })

const TAIL_BUFFER = 16
const TAIL_HEARTBEAT_MS = 3_000

/**
 * Reads the given partitions of `topic` from the given offsets, forever, one chunk per fetched
 * partition batch. kafkajs has no manual assignment, so a consumer in a group of its own
 * (`groupId` must be unique) assigns itself these partitions and seeks them after every join,
 * to where it got to. It never commits offsets. It reads committed records only (kafkajs's
 * default), and reports a batch that held nothing else (transaction markers, aborted records) as
 * an empty one, so that a reader's position reaches the high watermark.
 */
export const tail = (
  kafka: Kafka,
  topic: string,
  from: ReadonlyMap<number, number>,
  groupId: string
): Stream.Stream<PartitionBatch, LogError> =>
  from.size === 0
    ? Stream.never
    : Stream.unwrapScoped(
        Effect.gen(function* () {
          const queue = yield* Queue.bounded<Take.Take<PartitionBatch, LogError>>(TAIL_BUFFER)
          const offer = Runtime.runPromiseExit(yield* Effect.runtime<never>())
          const push = (take: Take.Take<PartitionBatch, LogError>) =>
            offer(Queue.offer(queue, take)).then(Exit.isSuccess)
          const next = new Map(from)
          const consumer = kafka.consumer({
            groupId,
            partitionAssigners: [fixedAssigner(topic, [...from.keys()])],
            sessionTimeout: 30_000,
            heartbeatInterval: TAIL_HEARTBEAT_MS,
            // an idle fetch holds `disconnect` up to this long; data ends the wait at once
            maxWaitTimeInMs: 500
          })
          consumer.on(consumer.events.GROUP_JOIN, () => {
            for (const [partition, offset] of next) consumer.seek({ topic, partition, offset: String(offset) })
          })
          consumer.on(consumer.events.CRASH, ({ payload }) => {
            if (!payload.restart) void push(Take.fail(fail(`read ${topic}`)(payload.error)))
          })
          // kafkajs skips `eachBatch` for a batch whose records were all filtered out, and reports
          // it only through this event (with `batchSize` 0); its position moves past them alike
          consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
            if (payload.batchSize !== 0 || payload.topic !== topic) return
            const after = Number(payload.lastOffset) + 1
            if (after <= (next.get(payload.partition) ?? 0)) return
            next.set(payload.partition, after)
            void push(Take.of({ partition: payload.partition, messages: [], next: after }))
          })
          yield* Effect.acquireRelease(tryKafka(`read ${topic}`, () => consumer.connect()), () =>
            // the queue first: a batch handler waiting to offer would hold up disconnect
            Queue.shutdown(queue).pipe(
              Effect.zipRight(Effect.promise(() => consumer.disconnect().catch(() => undefined)))
            )
          )
          yield* tryKafka(`read ${topic}`, async () => {
            await consumer.subscribe({ topics: [topic], fromBeginning: true })
            await consumer.run({
              autoCommit: false,
              eachBatch: async ({ batch, isRunning, isStale, heartbeat }) => {
                if (batch.messages.length === 0 || !isRunning() || isStale()) return
                // a slow reader must not lose its group membership while it holds a batch back
                const keepAlive = setInterval(() => heartbeat().catch(() => undefined), TAIL_HEARTBEAT_MS)
                const after = Number(batch.lastOffset()) + 1
                const pushed = await push(Take.of({ partition: batch.partition, messages: batch.messages, next: after })).finally(
                  () => clearInterval(keepAlive)
                )
                if (pushed) next.set(batch.partition, after)
              }
            })
          })
          return Stream.flattenTake(Stream.fromQueue(queue))
        })
      )

const EventValue = Schema.parseJson(
  Schema.Tuple(Schema.Number, Schema.Number, Schema.String, Schema.String, Schema.String, Schema.String, Schema.Unknown)
)
const decodeEventValue = Schema.decodeUnknownEither(EventValue)
const decodeKey = Schema.decodeUnknownEither(Schema.String)

const encodeEvent = (event: EventRecord): string =>
  JSON.stringify([event.seq, event.firstSeq, event.type, event.at, event.commandId, event.actor, event.payload])

/** The hash chain's record headers (docs/audit.md): the previous event's hash and the event's own, lowercase hex. */
export const PREV_HEADER = "svc-prev"
export const HASH_HEADER = "svc-hash"

const headerText = (message: KafkaMessage, name: string): string | null => {
  const value = message.headers?.[name]
  return value === undefined ? null : Array.isArray(value) ? String(value[0]) : value.toString("utf8")
}

/** A plain loop: this runs for every event a replay or projection reads. */
const decodeBatch = ({ partition, messages, next }: PartitionBatch): Effect.Effect<LogChunk, LogError> =>
  Effect.suspend(() => {
    const events = new Array<LoggedEvent>(messages.length)
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]
      const key = decodeKey(message.key?.toString("utf8"))
      const value = decodeEventValue(message.value?.toString("utf8"))
      if (Either.isLeft(key) || Either.isLeft(value)) {
        const cause = Either.isLeft(key) ? key.left : (value as Either.Left<unknown, unknown>).left
        return Effect.fail(fail(`decode event at partition ${partition} offset ${message.offset}`)(cause))
      }
      const [seq, firstSeq, type, at, commandId, actor, payload] = value.right
      const prev = headerText(message, PREV_HEADER)
      const hash = headerText(message, HASH_HEADER)
      events[i] = { partition, offset: Number(message.offset), key: key.right, seq, firstSeq, type, payload, at, commandId, actor, prev, hash }
    }
    return Effect.succeed({ partition, events, next })
  })

/** Appends one send may carry; the rest wait for the next. */
const MAX_APPENDS_PER_SEND = 500

export const make = (config: KafkaLogConfig): Effect.Effect<EventLogService, LogError, Scope.Scope> =>
  Effect.gen(function* () {
    const { partitions, prefix } = config
    const topics = topicsOf(prefix)
    const kafka = yield* makeClient(config.brokers, config.clientId)

    const admin = kafka.admin()
    yield* Effect.acquireRelease(tryKafka("connect admin", () => admin.connect()), () =>
      Effect.promise(() => admin.disconnect())
    )
    yield* tryKafka("create topics", () =>
      ensureTopics(admin, [
        commandsTopicSpec(prefix, partitions),
        // the events topic is the system of record: never expire it
        { topic: topics.events, partitions, config: { "retention.ms": "-1", "retention.bytes": "-1" } }
      ])
    )

    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner
    })
    yield* Effect.acquireRelease(tryKafka("connect producer", () => producer.connect()), () =>
      Effect.promise(() => producer.disconnect())
    )

    // Group commit: appends that arrive while a send is in flight go together in the next one.
    // One produce request carries every partition's messages; each partition's part is one record
    // batch, written whole at consecutive offsets, so every append still gets consecutive offsets.
    // One send at a time also keeps kafkajs's idempotent sequence numbers in order.
    interface Append {
      readonly partition: number
      readonly records: ReadonlyArray<EventRecord>
    }
    const shared = yield* GroupCommit.make({
      maxItems: MAX_APPENDS_PER_SEND,
      commit: (group: ReadonlyArray<Append>) =>
        tryKafka("append", () =>
          producer.send({
            topic: topics.events,
            acks: -1,
            messages: group.flatMap(({ partition, records }) =>
              records.map((record) => ({ key: record.key, value: encodeEvent(record), partition }))
            )
          })
        ).pipe(
          Effect.map((written) => {
            const next = new Map(written.map((w) => [w.partition, Number(w.baseOffset)]))
            return group.map(({ partition, records }) => {
              const first = next.get(partition)!
              next.set(partition, first + records.length)
              return records.map((_, i) => first + i)
            })
          })
        )
    })

    const append: EventLogService["append"] = (partitionKey, records) =>
      appendTo(partitionFor(partitionKey, partitions), records)

    const appendTo = (partition: number, records: ReadonlyArray<EventRecord>) =>
      records.length === 0
        ? Effect.succeed([])
        : shared.submit({ partition, records }).pipe(Effect.withSpan("EventLog.append", { attributes: { partition, count: records.length } }))

    const unknownPartitions = (operation: string, wanted: Iterable<number>): LogError | undefined => {
      const unknown = [...wanted].filter((p) => !Number.isInteger(p) || p < 0 || p >= partitions)
      return unknown.length === 0
        ? undefined
        : new LogError({ operation, message: `no such partitions: ${unknown.join(", ")} (of ${partitions})` })
    }

    const subscribe: EventLogService["subscribe"] = (from) => {
      const unknown = unknownPartitions("subscribe", from.keys())
      if (unknown) return Stream.fail(unknown)
      return tail(kafka, topics.events, from, `${prefix}.reader.${randomUUID()}`).pipe(Stream.mapEffect(decodeBatch))
    }

    const endOffsets: EventLogService["endOffsets"] = (wanted) => {
      const unknown = unknownPartitions("endOffsets", wanted)
      if (unknown) return Effect.fail(unknown)
      // a topic created a moment ago may not know its leaders yet (see untilLeadersKnown)
      return tryKafka("endOffsets", () => untilLeadersKnown(() => admin.fetchTopicOffsets(topics.events))).pipe(
        Effect.map((offsets) => {
          const high = new Map(offsets.map((o) => [o.partition, Number(o.high)]))
          return new Map(wanted.map((partition) => [partition, high.get(partition)!]))
        })
      )
    }

    const openWriter: EventLogService["openWriter"] = (partition) => {
      const unknown = unknownPartitions("openWriter", [partition])
      const end = Effect.map(endOffsets([partition]), (ends) => ends.get(partition)!)
      return unknown
        ? Effect.fail(unknown)
        : openTransactionalWriter(kafka, topics.events, prefix, partition, config.chained ?? true, config.lingerMs ?? DEFAULT_APPEND_LINGER_MS, end)
    }

    return { mode: "kafka", partitions, append, openWriter, subscribe, endOffsets } satisfies EventLogService
  })

/**
 * The transactional id of a partition's writer: the same on every node, so that a new owner's
 * producer fences the one before.
 */
export const writerId = (prefix: string, partition: number) => `${prefix}.writer.${partition}`

/** Kafka's answers to a producer whose epoch a newer one with the same transactional id has bumped. */
const FENCED_ERRORS = new Set(["INVALID_PRODUCER_EPOCH", "PRODUCER_FENCED"])
const PRODUCER_FENCED_CODE = 90

/** Whether kafkajs's error, or one it wraps (after retries), says this producer is fenced. */
const isFenced = (error: unknown): boolean => {
  if (typeof error !== "object" || error === null) return false
  const e = error as { type?: unknown; code?: unknown; cause?: unknown; originalError?: unknown; errors?: unknown }
  if (FENCED_ERRORS.has(String(e.type)) || e.code === PRODUCER_FENCED_CODE) return true
  return isFenced(e.cause) || isFenced(e.originalError) || (Array.isArray(e.errors) && e.errors.some(isFenced))
}

/**
 * A partition's writer: a transactional producer of its own. Opening it initializes the producer
 * id, which bumps the epoch of the transactional id and aborts what the previous owner left open;
 * from then on the broker refuses that owner's writes. Each group of appends is one transaction
 * (add the partition, produce, commit): its events become visible to readers together, or never.
 *
 * A refused transaction leaves the writer fenced for good. A commit that fails otherwise has an
 * unknown outcome and leaves kafkajs's producer unable to go on: the writer reports every later
 * append as failed, and its owner reopens the partition.
 */
const openTransactionalWriter = (
  kafka: Kafka,
  topic: string,
  prefix: string,
  partition: number,
  chained: boolean,
  lingerMs: number,
  /** The partition's end offset, read by the adapter's admin. */
  endOffset: Effect.Effect<number, LogError>
): Effect.Effect<PartitionWriter, LogError, Scope.Scope> =>
  Effect.gen(function* () {
    const producer = kafka.producer({
      transactionalId: writerId(prefix, partition),
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
      // a transaction that begins while the last one's markers are being written is refused
      // (CONCURRENT_TRANSACTIONS) until they are: retry soon, not after kafkajs's 300 ms
      retry: { initialRetryTime: 10, maxRetryTime: 1_000, retries: 12 }
    })
    const opening = `open the writer of partition ${partition}`
    yield* Effect.acquireRelease(tryKafka(opening, () => producer.connect()), () =>
      Effect.promise(() => producer.disconnect().catch(() => undefined))
    )
    // kafkajs initializes the producer id at the first transaction: an empty one sends nothing else
    yield* tryKafka(opening, async () => (await producer.transaction()).abort())
    // fenced now, nobody else writes the partition: its chain goes on from the last committed event
    let head = chained ? yield* lastHash(kafka, topic, prefix, partition, endOffset) : GENESIS
    let appended: { readonly offset: number; readonly hash: string } | undefined

    /** Why every later append fails: fenced, or kafkajs's transaction state is past repair. */
    let unusable: LogFenced | LogError | undefined

    const transact = async (records: ReadonlyArray<EventRecord>): Promise<number> => {
      const transaction = await producer.transaction()
      let committing = false
      try {
        const linked = chained ? chain(head, records) : undefined
        const [written] = await transaction.send({
          topic,
          acks: -1,
          messages: records.map((record, i) => ({
            key: record.key,
            value: encodeEvent(record),
            partition,
            headers: linked && { [PREV_HEADER]: i === 0 ? head : linked.hashes[i - 1], [HASH_HEADER]: linked.hashes[i] }
          }))
        })
        committing = true
        await transaction.commit()
        // an aborted transaction is no part of the chain: the head moves only with a commit
        if (linked !== undefined) {
          head = linked.head
          appended = { offset: Number(written.baseOffset) + records.length - 1, hash: head }
        }
        return Number(written.baseOffset)
      } catch (error) {
        // an end of the transaction (commit or abort) the coordinator answers with
        // CONCURRENT_TRANSACTIONS was refused: the coordinator is ending this transaction itself,
        // which it does when a newer writer bumps the epoch
        const endedByCoordinator = (e: unknown) => isFenced(e) || (e as { type?: unknown } | undefined)?.type === "CONCURRENT_TRANSACTIONS"
        // a transaction that never reached its commit is aborted: by us, or by the newer writer's
        // coordinator, whose refusal of our abort says we are fenced (the broker may have refused
        // the produce itself with no more than UNKNOWN_SERVER_ERROR)
        const abort = committing ? undefined : await transaction.abort().then(() => undefined, (abortError: unknown) => abortError ?? "failed")
        if (isFenced(error) || (committing && endedByCoordinator(error)) || (abort !== undefined && endedByCoordinator(abort))) {
          unusable = new LogFenced({ partition, message: `partition ${partition}: a newer writer has opened it` })
          throw unusable
        }
        const failed = fail(`append to partition ${partition}`)(error)
        // an aborted transaction leaves nothing readable; a failed commit's outcome is unknown, and
        // kafkajs can neither retry nor abort it
        if (committing || abort !== undefined) {
          unusable = new LogError({
            operation: failed.operation,
            message: `the writer of partition ${partition} cannot go on after ${failed.message}; reopen it`
          })
        }
        throw failed
      }
    }

    // one transaction per group: appends that arrive while one is in flight, or within the linger
    // after the first, go together in the next
    const committer = yield* GroupCommit.make({
      maxItems: MAX_APPENDS_PER_SEND,
      windowMs: lingerMs,
      // the partition changed hands while the append waited: its owner answers at once, not at its timeout
      closed: () => new LogError({ operation: `append to partition ${partition}`, message: `the writer of partition ${partition} was closed; the append's outcome is unknown` }),
      commit: (appends: ReadonlyArray<ReadonlyArray<EventRecord>>) =>
        Effect.suspend(() =>
          unusable
            ? Effect.fail(unusable)
            : Effect.tryPromise({
                try: () => transact(appends.flat()),
                catch: (error) =>
                  error instanceof LogFenced || error instanceof LogError ? error : fail(`append to partition ${partition}`)(error)
              })
        ).pipe(
          Effect.map((first) => {
            let offset = first
            return appends.map((records) => records.map(() => offset++))
          })
        )
    })

    return {
      partition,
      head: () => appended,
      append: (records) =>
        records.length === 0
          ? Effect.succeed([])
          : committer.submit(records).pipe(
              Effect.withSpan("PartitionWriter.append", { attributes: { partition, count: records.length } })
            )
    } satisfies PartitionWriter
  })

/** How many records before the end a new writer reads first to find the partition's last hash. */
const HEAD_WINDOW = 64

/**
 * The hash of the partition's last committed event: read from the end backwards, a window at a
 * time, until an event with a hash is found (a log written before the chain holds none: GENESIS).
 * Aborted records and transaction markers are skipped by the reader, as by every reader.
 */
const lastHash = (kafka: Kafka, topic: string, prefix: string, partition: number, endOffset: Effect.Effect<number, LogError>): Effect.Effect<string, LogError> =>
  Effect.gen(function* () {
    let until = yield* endOffset
    for (let window = HEAD_WINDOW; until > 0; window *= 4) {
      const from = Math.max(0, until - window)
      const found = yield* readUpToOffset(kafka, topic, `${prefix}.head.${randomUUID()}`, partition, from, until)
      if (found !== undefined) return found
      until = from
    }
    return GENESIS
  })

/** The hash of the last chained event in `[from, until)` of the partition, if any. */
const readUpToOffset = (kafka: Kafka, topic: string, groupId: string, partition: number, from: number, until: number) =>
  tail(kafka, topic, new Map([[partition, from]]), groupId).pipe(
    Stream.takeUntil((batch) => batch.next >= until),
    Stream.runFold(undefined as string | undefined, (found, batch) => {
      let last = found
      for (const message of batch.messages) {
        if (Number(message.offset) >= until) break
        last = headerText(message, HASH_HEADER) ?? last
      }
      return last
    }),
    Effect.timeoutFail({
      duration: HEAD_READ_TIMEOUT_MS,
      onTimeout: () => new LogError({ operation: `read the head of partition ${partition}`, message: `partition ${partition} was not read to offset ${until} within ${HEAD_READ_TIMEOUT_MS} ms` })
    })
  )

const HEAD_READ_TIMEOUT_MS = 30_000

/** How many nodes are members of the cluster whose topics start with `prefix` (the group `<prefix>.hosts`). */
export const runningNodes = (brokers: ReadonlyArray<string>, prefix: string): Effect.Effect<number, LogError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const admin = (yield* makeClient(brokers, `svc-cli-${randomUUID().slice(0, 8)}`)).admin()
      yield* Effect.acquireRelease(tryKafka("connect admin", () => admin.connect()), () => Effect.promise(() => admin.disconnect()))
      const { groups } = yield* tryKafka("describe group", () => admin.describeGroups([`${prefix}.hosts`]))
      return groups.reduce((n, group) => n + group.members.length, 0)
    })
  )

export const layer = (config: KafkaLogConfig): Layer.Layer<EventLog, LogError> => Layer.scoped(EventLog, make(config))
