/**
 * The EventLog contract: one suite, run unchanged against every adapter.
 */
import { expect, layer } from "@effect/vitest"
import { Chunk, Effect, Exit, type Layer, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { EventLog, type EventRecord, LogFenced, type LoggedEvent } from "../../streams/EventLog.ts"
import { hashOf } from "../../streams/Chain.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { readToEnd } from "../support/log.ts"

const record = (key: string, seq: number, payload: unknown = { n: seq }): EventRecord => ({
  key,
  seq,
  firstSeq: 1,
  type: "test.happened",
  payload,
  at: new Date(Date.UTC(2026, 10, 22, 12, 0, seq % 60)).toISOString(),
  commandId: randomUUID(),
  actor: "system"
})

/** Reads exactly `count` events from the given start offsets. */
const take = (from: ReadonlyMap<number, number>, count: number) =>
  Effect.flatMap(EventLog, (log) =>
    log.subscribe(from).pipe(
      Stream.mapConcat((chunk) => chunk.events),
      Stream.take(count),
      Stream.runCollect,
      Effect.map(Chunk.toReadonlyArray),
      Effect.timeout("20 seconds")
    )
  )

const strip = ({ partition: _p, offset: _o, prev: _prev, hash: _hash, ...rest }: LoggedEvent): EventRecord => rest

/** Distinct keys that land on distinct partitions, so tests can aim at partitions. */
const keysOnDistinctPartitions = (partitions: number, count: number, tag: string): ReadonlyArray<string> => {
  const found = new Map<number, string>()
  for (let i = 0; found.size < Math.min(count, partitions); i++) {
    const key = `contract:${tag}:${i}`
    const p = partitionFor(key, partitions)
    if (!found.has(p)) found.set(p, key)
  }
  return [...found.values()]
}

export const eventLogContract = (name: string, logLayer: Layer.Layer<EventLog, unknown>) =>
  layer(logLayer, { timeout: "120 seconds", excludeTestServices: true })(`EventLog contract: ${name}`, (it) => {
    it.effect("appends in order at consecutive offsets and reads back every field", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const key = `contract:order:${randomUUID()}`
        const partition = partitionFor(key, log.partitions)
        const before = (yield* log.endOffsets([partition])).get(partition)!
        const batch = [
          record(key, 1, { text: "héllo ✓", nested: { list: [1, 2.5, null, true] } }),
          record(key, 2),
          record(key, 3)
        ]
        const offsets = yield* log.append(key, batch)
        expect(offsets[0]).toBeGreaterThanOrEqual(before)
        expect(offsets).toEqual([offsets[0], offsets[0] + 1, offsets[0] + 2])
        expect((yield* log.endOffsets([partition])).get(partition)).toBeGreaterThan(offsets[2])

        const read = yield* take(new Map([[partition, before]]), 3)
        expect(read.map(strip)).toEqual(batch)
        expect(read.map((e) => [e.partition, e.offset])).toEqual(offsets.map((o) => [partition, o]))
      }))

    it.effect("places each key on Kafka's murmur2 partition and serves only subscribed partitions", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const [a, b] = keysOnDistinctPartitions(log.partitions, 2, randomUUID())
        const pa = partitionFor(a, log.partitions)
        const pb = partitionFor(b, log.partitions)
        const ends = yield* log.endOffsets([pa, pb])
        yield* log.append(b, [record(b, 1)])
        yield* log.append(a, [record(a, 1)])
        const read = yield* take(new Map([[pa, ends.get(pa)!]]), 1)
        expect(read[0].key).toBe(a)
        expect(read[0].partition).toBe(pa)
        const readB = yield* take(new Map([[pb, ends.get(pb)!]]), 1)
        expect(readB[0].key).toBe(b)
      }))

    it.effect("starts a subscription at the given offset", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const key = `contract:from:${randomUUID()}`
        const partition = partitionFor(key, log.partitions)
        const offsets = yield* log.append(key, [1, 2, 3, 4].map((seq) => record(key, seq)))
        const read = yield* take(new Map([[partition, offsets[2]]]), 2)
        expect(read.map((e) => e.seq)).toEqual([3, 4])
      }))

    it.effect("tails: events appended after subscribing arrive", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const key = `contract:tail:${randomUUID()}`
        const partition = partitionFor(key, log.partitions)
        const end = (yield* log.endOffsets([partition])).get(partition)!
        const reader = yield* Effect.fork(take(new Map([[partition, end]]), 2))
        yield* Effect.sleep("300 millis")
        yield* log.append(key, [record(key, 1)])
        yield* Effect.sleep("100 millis")
        yield* log.append(key, [record(key, 2)])
        const read = yield* reader.await.pipe(Effect.flatten)
        expect(read.map((e) => e.seq)).toEqual([1, 2])
      }))

    it.effect("keeps each append contiguous and every offset unique under concurrent appenders", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const tag = randomUUID()
        const key = (i: number) => `contract:conc:${tag}:${i}`
        // all writers on one partition: find 8 keys sharing the partition of key(0)
        const partition = partitionFor(key(0), log.partitions)
        const keys: string[] = []
        for (let i = 0; keys.length < 8; i++) if (partitionFor(key(i), log.partitions) === partition) keys.push(key(i))
        const end = (yield* log.endOffsets([partition])).get(partition)!
        const results = yield* Effect.forEach(
          keys,
          (k) => log.append(k, [1, 2, 3].map((seq) => record(k, seq))),
          { concurrency: "unbounded" }
        )
        const all = results.flat()
        expect(new Set(all).size).toBe(24)
        for (const offsets of results) expect(offsets).toEqual([offsets[0], offsets[0] + 1, offsets[0] + 2])
        const read = yield* take(new Map([[partition, end]]), 24)
        for (const k of keys) expect(read.filter((e) => e.key === k).map((e) => e.seq)).toEqual([1, 2, 3])
      }))

    it.effect("a partition's writer appends at increasing offsets, and a reader reaches the end offset", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const log = yield* EventLog
          const key = `contract:writer:${randomUUID()}`
          const partition = partitionFor(key, log.partitions)
          const before = (yield* log.endOffsets([partition])).get(partition)!
          const writer = yield* log.openWriter(partition)
          const first = yield* writer.append([record(key, 1), record(key, 2)])
          const [third] = yield* writer.append([record(key, 3)])
          expect(first).toEqual([first[0], first[0] + 1])
          expect(third).toBeGreaterThan(first[1])
          const read = yield* readToEnd(partition, before, third)
          expect(read.map((e) => [e.offset, e.seq])).toEqual([[first[0], 1], [first[1], 2], [third, 3]])
          expect(yield* writer.append([])).toEqual([])
        })
      ))

    it.effect("a stale writer's append is refused whole (LogFenced) and the new writer's land", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const tag = randomUUID()
        const [key, other] = [`contract:fence:${tag}`, `contract:fence:${tag}:other`]
        const partition = partitionFor(key, log.partitions)
        const before = (yield* log.endOffsets([partition])).get(partition)!
        const handover = yield* Effect.scoped(
          Effect.gen(function* () {
            const stale = yield* log.openWriter(partition)
            yield* stale.append([record(key, 1)])
            // the partition changes hands: the new owner writes the key's next seq
            return yield* Effect.scoped(
              Effect.gen(function* () {
                const owner = yield* log.openWriter(partition)
                yield* owner.append([record(key, 2, { by: "owner" })])
                const refused = yield* stale.append([record(other, 1), record(key, 2, { by: "stale" })]).pipe(Effect.exit)
                const [last] = yield* owner.append([record(key, 3, { by: "owner" })])
                return { refused, last }
              })
            )
          })
        )
        expect(handover.refused).toStrictEqual(Exit.fail(expect.any(LogFenced)))
        const read = yield* readToEnd(partition, before, handover.last)
        expect(read.filter((e) => e.key === other)).toEqual([])
        expect(read.filter((e) => e.key === key).map((e) => [e.seq, e.payload])).toEqual([
          [1, { n: 1 }],
          [2, { by: "owner" }],
          [3, { by: "owner" }]
        ])
      }))

    it.effect("chains a partition's events through its writers: a new writer goes on from the last event's hash", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const key = `contract:chain:${randomUUID()}`
        const partition = partitionFor(key, log.partitions)
        const first = yield* Effect.scoped(Effect.flatMap(log.openWriter(partition), (writer) => writer.append([record(key, 1), record(key, 2)])))
        // a new owner's writer (on Kafka it fences the first) reads the head from the log's end
        const next = yield* Effect.scoped(Effect.flatMap(log.openWriter(partition), (writer) => writer.append([record(key, 3)])))
        const read = yield* readToEnd(partition, first[0], next[0])
        const events = read.filter((e) => e.key === key)
        expect(events.map((e) => e.seq)).toEqual([1, 2, 3])
        for (const event of events) expect(event.hash).toBe(hashOf(event.prev!, event))
        expect(events[1].prev).toBe(events[0].hash)
        expect(events[2].prev).toBe(events[1].hash)
      }))

    it.effect("an empty append writes nothing", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const key = `contract:empty:${randomUUID()}`
        const partition = partitionFor(key, log.partitions)
        const before = (yield* log.endOffsets([partition])).get(partition)
        expect(yield* log.append(key, [])).toEqual([])
        expect((yield* log.endOffsets([partition])).get(partition)).toBe(before)
      }))
  })
