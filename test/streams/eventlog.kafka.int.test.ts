/**
 * The Kafka log against a real broker (`KAFKA_BROKERS`; `npm test` starts one with
 * scripts/kafka.sh): the shared contract, then what only Kafka has.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Chunk, Effect, Exit, Fiber, Option, Schedule, Stream } from "effect"
import kafkajs from "kafkajs"
import type { Admin } from "kafkajs"
import { randomUUID } from "node:crypto"
import { EventLog, type EventRecord, LogError } from "../../streams/EventLog.ts"
import * as KafkaLog from "../../streams/KafkaLog.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { kafkaBrokers, uniqueName } from "../support/env.ts"
import { eventLogContract } from "./eventlog.contract.ts"

const partitions = 4
const config = (prefix: string, count = partitions): KafkaLog.KafkaLogConfig => ({
  brokers: kafkaBrokers,
  prefix,
  partitions: count,
  clientId: "eventlog-kafka-test"
})

const record = (key: string, seq: number): EventRecord => ({
  key,
  seq,
  firstSeq: 1,
  type: "test.happened",
  payload: { seq },
  at: "2026-11-22T12:00:00.000Z",
  commandId: randomUUID(),
  actor: "system"
})

/** A kafkajs admin of the test's own, to look at what the adapter left on the broker. */
const withAdmin = <A>(use: (admin: Admin) => Promise<A>) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const admin = new kafkajs.Kafka({ brokers: kafkaBrokers, logLevel: kafkajs.logLevel.NOTHING }).admin()
      await admin.connect()
      return admin
    }),
    (admin) => Effect.promise(() => use(admin)),
    (admin) => Effect.promise(() => admin.disconnect())
  )

if (kafkaBrokers.length === 0) {
  describe.skip("EventLog on Kafka: KAFKA_BROKERS is unset (scripts/kafka.sh start prints it)", () => {
    it("needs a broker", () => undefined)
  })
} else {
  eventLogContract("kafka", KafkaLog.layer(config(uniqueName("t"))))

  const prefix = uniqueName("t")
  const topics = KafkaLog.topicsOf(prefix)

  layer(KafkaLog.layer(config(prefix)), { timeout: "120 seconds", excludeTestServices: true })("EventLog on Kafka", (it) => {
    it.effect("creates co-partitioned topics and keeps the events topic forever", () =>
      Effect.gen(function* () {
        const { metadata, configs } = yield* withAdmin(async (admin) => ({
          metadata: await admin.fetchTopicMetadata({ topics: [topics.commands, topics.events] }),
          configs: await admin.describeConfigs({
            includeSynonyms: false,
            resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topics.events, configNames: ["retention.ms"] }]
          })
        }))
        expect(metadata.topics.map((t) => t.partitions.length)).toEqual([partitions, partitions])
        expect(configs.resources[0].configEntries[0].configValue).toBe("-1")
      }))

    it.effect("refuses a partition count other than the existing topics'", () =>
      Effect.gen(function* () {
        const exit = yield* Effect.scoped(KafkaLog.make(config(prefix, partitions + 1))).pipe(Effect.exit)
        expect(exit).toStrictEqual(Exit.fail(expect.any(LogError)))
        if (Exit.isFailure(exit)) expect(String(exit.cause)).toContain(`has ${partitions} partitions, configured ${partitions + 1}`)
      }))

    it.effect("writes the actor key as message key and a compact value", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const key = `wire:${randomUUID()}`
        const event = record(key, 1)
        const [offset] = yield* log.append(key, [event])
        const partition = partitionFor(key, partitions)
        const raw = yield* KafkaLog.tail(
          new kafkajs.Kafka({ brokers: kafkaBrokers, logLevel: kafkajs.logLevel.NOTHING }),
          topics.events,
          new Map([[partition, offset]]),
          `${prefix}.test.${randomUUID()}`
        ).pipe(Stream.runHead, Effect.map((batch) => Option.getOrThrow(batch).messages[0]))
        expect(raw.key?.toString()).toBe(key)
        expect(JSON.parse(raw.value!.toString())).toEqual([1, 1, event.type, event.at, event.commandId, event.actor, event.payload])
      }))

    it.effect("reads several partitions, each chunk from one partition in offset order", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const tag = randomUUID()
        const keys = Array.from({ length: 12 }, (_, i) => `multi:${tag}:${i}`)
        const ends = yield* log.endOffsets([0, 1, 2, 3])
        for (const key of keys) yield* log.append(key, [record(key, 1), record(key, 2)])
        const chunks = yield* log.subscribe(ends).pipe(
          Stream.map((chunk) => chunk.events),
          Stream.mapAccum(0, (n, chunk) => [n + chunk.length, [n + chunk.length, chunk] as const]),
          Stream.takeUntil(([n]) => n >= keys.length * 2),
          Stream.map(([, chunk]) => chunk),
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray),
          Effect.timeout("20 seconds")
        )
        for (const chunk of chunks) expect(new Set(chunk.map((e) => e.partition)).size).toBe(1)
        const events = chunks.flat()
        for (const p of [0, 1, 2, 3]) {
          const offsets = events.filter((e) => e.partition === p).map((e) => e.offset)
          expect(offsets).toEqual([...offsets].sort((a, b) => a - b))
          expect(offsets[0] ?? ends.get(p)).toBe(ends.get(p))
        }
        for (const key of keys) expect(events.filter((e) => e.key === key).map((e) => e.seq)).toEqual([1, 2])
      }))

    it.effect("rejects partitions the log does not have", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const exit = yield* log.subscribe(new Map([[partitions, 0]])).pipe(Stream.runDrain, Effect.exit)
        expect(exit).toStrictEqual(Exit.fail(expect.any(LogError)))
        expect(yield* Effect.exit(log.endOffsets([partitions]))).toStrictEqual(Exit.fail(expect.any(LogError)))
      }))

    it.effect("leaves its reader group when the subscription is interrupted", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const readerGroups = () =>
          withAdmin(async (admin) =>
            (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(`${prefix}.reader.`))
          )
        const before = new Set(yield* readerGroups())
        const reader = yield* Effect.fork(Stream.runDrain(log.subscribe(new Map([[0, 0]]))))
        let group: string | undefined
        while (group === undefined) {
          yield* Effect.sleep("100 millis")
          group = (yield* readerGroups()).find((g) => !before.has(g))
        }
        yield* Fiber.interrupt(reader)
        // the reader's LeaveGroup is answered before the coordinator's view of the group settles:
        // wait for that view, within a bound far below the session timeout (30 s) that would
        // otherwise be what empties it
        const members = () => withAdmin(async (admin) => (await admin.describeGroups([group!])).groups[0].members)
        const left = yield* members().pipe(
          Effect.repeat({ until: (listed) => listed.length === 0, schedule: Schedule.spaced("100 millis") }),
          Effect.timeoutTo({ duration: "5 seconds", onSuccess: () => true, onTimeout: () => false })
        )
        expect(left, "the group still lists a member 5 s after its reader stopped").toBe(true)
      }))
  })
}
