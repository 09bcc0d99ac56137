/**
 * The Kafka adapter of the log (kafkajs). Events live in `<prefix>.events`, co-partitioned with
 * `<prefix>.commands` (same partition count, Kafka's murmur2 partitioner on the actor key).
 *
 * An event on the wire: message key = the event's `key`; value = the JSON array
 * `[seq, firstSeq, type, at, commandId, actor, payload]` (positional, so the field names are not repeated in
 * every record); partition and offset are Kafka's.
 *
 * The kafkajs plumbing the cluster adapter shares (client, topic creation, tailing fixed
 * partitions) is exported from here too.
 */
import { Effect, Either, Exit, Layer, Queue, Runtime, Schema, type Scope, Stream, Take } from "effect"
import kafkajs from "kafkajs"
import type { Admin, Kafka, KafkaMessage, LogEntry, PartitionAssigner } from "kafkajs"
import { randomUUID } from "node:crypto"
import { EventLog, type EventLogService, type EventRecord, LogError, type LoggedEvent } from "./EventLog.ts"
import { partitionFor } from "./partitioner.ts"

const { AssignerProtocol, Kafka: KafkaClient, Partitioners, logLevel } = kafkajs

export interface KafkaLogConfig {
  readonly brokers: ReadonlyArray<string>
  /** Topic prefix: `<prefix>.commands` and `<prefix>.events`. */
  readonly prefix: string
  readonly partitions: number
  readonly clientId: string
}

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

const logEntry = ({ namespace, level, log: { message, timestamp: _timestamp, logger: _logger, ...fields } }: LogEntry) => {
  // kafkajs logs each failed request at error level and then retries it; what finally fails is
  // reported by the operation that called it
  const log = namespace === "Connection" ? Effect.logDebug : level === logLevel.ERROR ? Effect.logError : Effect.logWarning
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
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic: spec.topic,
          numPartitions: spec.partitions,
          configEntries: Object.entries(spec.config ?? {}).map(([name, value]) => ({ name, value }))
        }
      ]
    })
  }
  const { topics } = await admin.fetchTopicMetadata({ topics: specs.map((spec) => spec.topic) })
  for (const spec of specs) {
    const found = topics.find((topic) => topic.name === spec.topic)?.partitions.length
    if (found !== spec.partitions) {
      throw new Error(`topic ${spec.topic} has ${found} partitions, configured ${spec.partitions}`)
    }
  }
}

export interface PartitionBatch {
  readonly partition: number
  /** In offset order. */
  readonly messages: ReadonlyArray<KafkaMessage>
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
 * to where it got to. It never commits offsets.
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
                const pushed = await push(Take.of({ partition: batch.partition, messages: batch.messages })).finally(
                  () => clearInterval(keepAlive)
                )
                if (pushed) next.set(batch.partition, Number(batch.lastOffset()) + 1)
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

/** A plain loop: this runs for every event a replay or projection reads. */
const decodeBatch = ({ partition, messages }: PartitionBatch): Effect.Effect<ReadonlyArray<LoggedEvent>, LogError> =>
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
      events[i] = { partition, offset: Number(message.offset), key: key.right, seq, firstSeq, type, payload, at, commandId, actor }
    }
    return Effect.succeed(events)
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
    interface Pending {
      readonly partition: number
      readonly records: ReadonlyArray<EventRecord>
      readonly settle: (result: { offsets: ReadonlyArray<number> } | { error: unknown }) => void
    }
    const pending: Pending[] = []
    let sending = false
    const sendPending = async () => {
      if (sending) return
      sending = true
      while (pending.length > 0) {
        const group = pending.splice(0, MAX_APPENDS_PER_SEND)
        try {
          const written = await producer.send({
            topic: topics.events,
            acks: -1,
            messages: group.flatMap(({ partition, records }) =>
              records.map((record) => ({ key: record.key, value: encodeEvent(record), partition }))
            )
          })
          const next = new Map(written.map((w) => [w.partition, Number(w.baseOffset)]))
          for (const { partition, records, settle } of group) {
            const first = next.get(partition)!
            next.set(partition, first + records.length)
            settle({ offsets: records.map((_, i) => first + i) })
          }
        } catch (error) {
          for (const { settle } of group) settle({ error })
        }
      }
      sending = false
    }

    const append: EventLogService["append"] = (partitionKey, records) => {
      if (records.length === 0) return Effect.succeed([])
      const partition = partitionFor(partitionKey, partitions)
      return tryKafka("append", () =>
        new Promise<ReadonlyArray<number>>((resolve, reject) => {
          pending.push({ partition, records, settle: (r) => ("offsets" in r ? resolve(r.offsets) : reject(r.error)) })
          void sendPending()
        })
      ).pipe(Effect.withSpan("EventLog.append", { attributes: { partition, count: records.length } }))
    }

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
      return tryKafka("endOffsets", () => admin.fetchTopicOffsets(topics.events)).pipe(
        Effect.map((offsets) => {
          const high = new Map(offsets.map((o) => [o.partition, Number(o.high)]))
          return new Map(wanted.map((partition) => [partition, high.get(partition)!]))
        })
      )
    }

    return { mode: "kafka", partitions, append, subscribe, endOffsets } satisfies EventLogService
  })

export const layer = (config: KafkaLogConfig): Layer.Layer<EventLog, LogError> => Layer.scoped(EventLog, make(config))
