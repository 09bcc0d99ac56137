/**
 * The fence at the Kafka log: a partition's writer is a transactional producer, so a new owner's
 * writer refuses the old owner's appends at the broker, whatever keys they carry, before any
 * answer; and what a reader and a projection see of a transactional log reaches its end offset.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, Fiber, Option, Stream } from "effect"
import kafkajs from "kafkajs"
import { randomUUID } from "node:crypto"
import { encodeEvent, keyOf, kindRegistry } from "../../actors/kernel.ts"
import { connect, migrate, service } from "../../streams/Db.ts"
import { EventLog, type EventRecord, LogFenced, readUpTo } from "../../streams/EventLog.ts"
import * as KafkaLog from "../../streams/KafkaLog.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { project } from "../../streams/Projector.ts"
import { Added, CounterActor, countersTable } from "../support/counter.ts"
import { databaseUrl, kafkaBrokers, uniqueName } from "../support/env.ts"
import { readToEnd } from "../support/log.ts"

const PARTITIONS = 2

const record = (key: string, seq: number): EventRecord => ({
  key,
  seq,
  firstSeq: seq,
  type: "test.happened",
  payload: { seq },
  at: "2026-11-22T12:00:00.000Z",
  commandId: randomUUID(),
  actor: "system"
})

if (kafkaBrokers.length === 0) {
  describe.skip("the fence at the Kafka log: KAFKA_BROKERS is unset", () => undefined)
} else {
  const prefix = uniqueName("t")
  const logLayer = KafkaLog.layer({ brokers: kafkaBrokers, prefix, partitions: PARTITIONS, clientId: "fence-test" })

  layer(logLayer, { timeout: "120 seconds", excludeTestServices: true })("the fence at the Kafka log", (it) => {
    it.effect("a new owner's writer fences the old one: its appends are refused whatever keys they carry", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const tag = randomUUID()
        const partition = partitionFor(`fence:${tag}:a`, PARTITIONS)
        const before = (yield* log.endOffsets([partition])).get(partition)!
        const acknowledged = yield* Effect.scoped(
          Effect.gen(function* () {
            const stale = yield* log.openWriter(partition)
            yield* stale.append([record(`fence:${tag}:a`, 1)])
            return yield* Effect.scoped(
              Effect.gen(function* () {
                const owner = yield* log.openWriter(partition)
                // keys the new owner never wrote: only the producer's epoch refuses them
                expect(yield* Effect.exit(stale.append([record(`fence:${tag}:b`, 1)]))).toStrictEqual(Exit.fail(expect.any(LogFenced)))
                expect(yield* Effect.exit(stale.append([record(`fence:${tag}:c`, 1)]))).toStrictEqual(Exit.fail(expect.any(LogFenced)))
                return yield* owner.append([record(`fence:${tag}:a`, 2), record(`fence:${tag}:d`, 1)])
              })
            )
          })
        )
        const read = yield* readToEnd(partition, before, Math.max(...acknowledged))
        expect(read.map((e) => [e.key, e.seq])).toEqual([
          [`fence:${tag}:a`, 1],
          [`fence:${tag}:a`, 2],
          [`fence:${tag}:d`, 1]
        ])
      }))

    it.effect("an append in flight while a new owner opens is acknowledged and in the log, or refused and absent", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const tag = randomUUID()
        const partition = partitionFor(`race:${tag}`, PARTITIONS)
        const before = (yield* log.endOffsets([partition])).get(partition)!
        const outcomes = yield* Effect.scoped(
          Effect.gen(function* () {
            const stale = yield* log.openWriter(partition)
            // a stream of appends, one after the other, while the partition changes hands, and a few
            // more once it has (however long the new owner takes to open)
            let answered = 0
            let afterOpened: number | undefined
            const appends = yield* Effect.fork(
              Effect.gen(function* () {
                const outcomes: Array<readonly [number, Exit.Exit<ReadonlyArray<number>, { readonly _tag: string }>]> = []
                for (let i = 0; afterOpened === undefined || answered < afterOpened + 3; i++) {
                  const exit = yield* Effect.exit(stale.append([record(`race:${tag}:${i}`, 1), record(`race:${tag}:${i}`, 2)]))
                  outcomes.push([i, exit])
                  answered++
                }
                return outcomes
              })
            )
            while (answered < 3) yield* Effect.sleep("5 millis")
            yield* Effect.scoped(log.openWriter(partition))
            afterOpened = answered
            return yield* Fiber.join(appends)
          })
        )
        const acknowledged = outcomes.filter(([, exit]) => Exit.isSuccess(exit)).map(([i]) => i)
        const failedWith = (tag: string) => outcomes.filter(([, exit]) => Exit.isFailure(exit) && Cause.failureOption(exit.cause).pipe(Option.exists((e) => e._tag === tag))).map(([i]) => i)
        const fenced = failedWith("LogFenced")
        // the broker may answer an append caught mid-handover with an error of its own: its writer
        // then reports an unknown outcome (LogError) for it and every later append, and its owner
        // reads the log back
        const unknown = failedWith("LogError")
        expect(acknowledged.length).toBeGreaterThan(0)
        expect(fenced.length + unknown.length).toBeGreaterThan(0)
        // the last two appends, sent once the new owner had opened, were refused
        expect(outcomes.slice(-2).every(([, exit]) => Exit.isFailure(exit))).toBe(true)
        expect(acknowledged.length + fenced.length + unknown.length).toBe(outcomes.length)
        const offsets = outcomes.flatMap(([, exit]) => (Exit.isSuccess(exit) ? exit.value : []))
        const read = yield* readToEnd(partition, before, Math.max(...offsets))
        // each append whole or not at all, in order: every acknowledged one, no refused one, and of
        // those with an unknown outcome whichever the log holds
        const present = [...new Set(read.map((e) => Number(e.key.slice(`race:${tag}:`.length))))]
        expect(read.map((e) => e.key)).toEqual(present.flatMap((i) => [`race:${tag}:${i}`, `race:${tag}:${i}`]))
        expect(present).toEqual([...present].sort((a, b) => a - b))
        expect(present.filter((i) => !unknown.includes(i))).toEqual(acknowledged)
      }))

    it.effect("appends that reach a writer within its linger share one transaction; a later one gets its own", () =>
      Effect.gen(function* () {
        const lingering = yield* KafkaLog.make({ brokers: kafkaBrokers, prefix, partitions: PARTITIONS, clientId: "fence-test", lingerMs: 200 })
        const key = `linger:${randomUUID()}`
        const writer = yield* lingering.openWriter(partitionFor(key, PARTITIONS))
        const first = yield* Effect.fork(writer.append([record(key, 1)]))
        yield* Effect.sleep("20 millis")
        const [second] = yield* writer.append([record(key, 2)])
        const [firstOffset] = yield* Fiber.join(first)
        const [later] = yield* writer.append([record(key, 3)])
        // a transaction's records take consecutive offsets, and its commit marker the one after them
        expect([second - firstOffset, later - second]).toEqual([1, 2])
      }).pipe(Effect.scoped))

    it.effect("a reader passes an aborted transaction: it reads none of it and reaches the end offset", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const partition = 0
        const before = (yield* log.endOffsets([partition])).get(partition)!
        // nothing but aborted records and their marker: kafkajs hands the reader no batch for them
        yield* Effect.promise(async () => {
          const producer = new kafkajs.Kafka({ brokers: kafkaBrokers, logLevel: kafkajs.logLevel.NOTHING }).producer({
            transactionalId: `${prefix}.test.${randomUUID()}`,
            maxInFlightRequests: 1
          })
          await producer.connect()
          const transaction = await producer.transaction()
          await transaction.send({ topic: KafkaLog.topicsOf(prefix).events, messages: [{ partition, key: "aborted", value: "[]" }] })
          await transaction.abort()
          await producer.disconnect()
        })
        // the end a reader sees (the last stable offset) passes the record and its marker once the
        // coordinator has written the marker, just after the abort answers; an earlier test's
        // fenced transaction may add markers of its own
        let end = before
        while (end < before + 2) {
          yield* Effect.sleep("10 millis")
          end = (yield* log.endOffsets([partition])).get(partition)!
        }
        const chunks = yield* readUpTo(log, new Map([[partition, before]]), new Map([[partition, end]])).pipe(
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray),
          Effect.timeout("20 seconds")
        )
        expect(chunks).toEqual([{ partition, events: [], next: end }])
      }))

    it.effect("a projection of a transactional log reaches its end offset, past the commit markers", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const schema = uniqueName("t")
        const db = service(connect({ url: databaseUrl, schema, max: 2 }), schema)
        yield* Effect.addFinalizer(() => Effect.promise(() => db.sql.end()))
        yield* migrate(db.sql, schema)
        yield* Effect.promise(() => db.sql.unsafe(countersTable(schema)))
        const key = keyOf(CounterActor, randomUUID())
        const partition = partitionFor(key, PARTITIONS)
        const writer = yield* log.openWriter(partition)
        for (let seq = 1; seq <= 3; seq++) {
          yield* writer.append([{ ...record(key, seq), ...encodeEvent(CounterActor, new Added({ amount: 1, total: seq })) }])
        }
        const end = (yield* log.endOffsets([partition])).get(partition)!
        let reached = 0
        const projection = yield* Effect.fork(
          project(db, kindRegistry([CounterActor]), [partition], (_, next) => {
            reached = next
          })
        )
        while (reached < end) yield* Effect.sleep("20 millis")
        yield* Fiber.interrupt(projection)
        // past the end it was asked for: an earlier test's fenced transaction may add markers after it
        expect(reached).toBeGreaterThanOrEqual(end)
        const [row] = yield* Effect.promise(() => db.sql`select total, seq from ${db.table("counters")} where key = ${key}`)
        expect(row).toEqual({ total: 3, seq: 3 })
      }).pipe(Effect.scoped, Effect.timeout("30 seconds")))
  })
}
