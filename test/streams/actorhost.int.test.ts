import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
import { Cluster } from "../../streams/Cluster.ts"
import { allPartitions, EventLog } from "../../streams/EventLog.ts"
import { randomUUID } from "node:crypto"
import { keyOf, kindRegistry } from "../../actors/kernel.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import * as Db from "../../streams/Db.ts"
import * as ActorHost from "../../streams/ActorHost.ts"
import * as EmbeddedLog from "../../streams/EmbeddedLog.ts"
import * as KafkaCluster from "../../streams/KafkaCluster.ts"
import * as KafkaLog from "../../streams/KafkaLog.ts"
import * as LocalCluster from "../../streams/LocalCluster.ts"
import * as NodeMetrics from "../../streams/Metrics.ts"
import { Add, CEILING, CounterActor, countersTable } from "../support/counter.ts"
import { databaseUrl, kafkaBrokers, uniqueName } from "../support/env.ts"
import { addPosition, type Position } from "../../streams/ReadFence.ts"
import { verifyLog } from "../../streams/LogVerify.ts"

const PARTITIONS = 4

/** The log and cluster of one backend, for a given schema (and topic prefix of the same name). */
type Backend = (schema: string) => Layer.Layer<EventLog | Cluster, unknown, Db.Db>

const embedded: Backend = (schema) =>
  Layer.merge(EmbeddedLog.layer({ logSchema: `${schema}_log`, partitions: PARTITIONS }), LocalCluster.layer("node-a", PARTITIONS))

const kafka: Backend = (schema) =>
  Layer.merge(
    KafkaLog.layer({ brokers: kafkaBrokers, prefix: schema, partitions: PARTITIONS, clientId: "actorhost-test" }),
    KafkaCluster.layer({ brokers: kafkaBrokers, prefix: schema, partitions: PARTITIONS, nodeId: `node-${uniqueName("n")}`, sessionTimeoutMs: 3_000 })
  )

const hostLayer = (backend: Backend, schema: string) => {
  const db = Db.layer({ url: databaseUrl, schema })
  const deps = Layer.mergeAll(backend(schema), Layer.succeed(ActorHost.ActorKinds, kindRegistry([CounterActor])), NodeMetrics.layer).pipe(Layer.provideMerge(db))
  return ActorHost.layer({ commandTimeoutMs: 10_000, cachedKeysPerPartition: 2 }).pipe(Layer.provideMerge(deps))
}


const positionsOf = (answers: ReadonlyArray<{ readonly position: Position | undefined }>) => {
  const positions = new Map<number, number>()
  for (const { position } of answers) if (position !== undefined) addPosition(positions, position)
  return positions
}

const meta = (commandId: string = randomUUID()) => ({ commandId, at: "2026-11-22T12:00:00.000Z", actor: "system" })

/** Builds a host in its own scope so a test can stop and restart it. */
const start = (backend: Backend, schema: string) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(hostLayer(backend, schema), scope).pipe(Effect.orDie)
    const db = context.unsafeMap.get(Db.Db.key) as Db.DbService
    yield* Effect.promise(() => db.sql.unsafe(countersTable(schema)))
    return { context, scope, db, host: context.unsafeMap.get(ActorHost.ActorHost.key) as ActorHost.ActorHostService }
  })

const suite = (name: string, backend: Backend) => describe(`ActorHost on the ${name} log`, () => {

  it.live("decides with gap-free seq, answers with its log position, and ignores a retried command id", () =>
    Effect.gen(function* () {
      const schema = uniqueName("t")
      const { host, db, scope, context } = yield* start(backend, schema)
      const first = yield* host.send(CounterActor, "a", new Add({ amount: 2 }), meta())
      expect(first).toMatchObject({ seq: 1, state: { total: 2 }, duplicate: false })
      const retryId = randomUUID()
      const second = yield* host.send(CounterActor, "a", new Add({ amount: 3 }), meta(retryId))
      expect(second.seq).toBe(2)
      // read-your-writes: the answer names where its events are; once projected past it, the row is there
      // offsets increase; Kafka's transaction markers leave gaps between appends
      expect(second.position?.partition).toBe(first.position!.partition)
      expect(second.position!.offset).toBeGreaterThan(first.position!.offset)
      expect(yield* Effect.promise(() => host.awaitProjected(positionsOf([second]), 5_000))).toBe(true)
      const [row] = yield* Effect.promise(() => db.sql`select total, seq from ${db.table("counters")} where key = 'counter:a'`)
      expect(row).toEqual({ total: 5, seq: 2 })
      const retried = yield* host.send(CounterActor, "a", new Add({ amount: 3 }), meta(retryId))
      expect(retried).toMatchObject({ seq: 2, state: { total: 5 }, events: [], duplicate: true })
      const endOffsets = Effect.flatMap(EventLog, (log) => log.endOffsets(allPartitions(PARTITIONS))).pipe(Effect.provide(context))
      const before = yield* endOffsets
      const rejected = yield* host.send(CounterActor, "a", new Add({ amount: CEILING }), meta()).pipe(Effect.flip)
      expect(rejected._tag).toBe("OverCeiling")
      expect(yield* endOffsets).toEqual(before)
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("serialises concurrent commands per key: no lost update, seq 1..n", () =>
    Effect.gen(function* () {
      const schema = uniqueName("t")
      const { host, db, scope } = yield* start(backend, schema)
      const answers = yield* Effect.forEach(Array.from({ length: 50 }, (_, i) => i), (i) => host.send(CounterActor, `k${i % 5}`, new Add({ amount: 1 }), meta()), { concurrency: "unbounded" })
      expect(answers.map((a) => a.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => Math.floor(i / 5) + 1))
      expect(yield* Effect.promise(() => host.awaitProjected(positionsOf(answers), 5_000))).toBe(true)
      const rows = yield* Effect.promise(() => db.sql`select key, total, seq from ${db.table("counters")} order by key`)
      expect(rows.map((r) => [r.total, r.seq])).toEqual(Array.from({ length: 5 }, () => [10, 10]))
      const states = yield* Effect.promise(() => db.sql`select key, seq from ${db.table("actor_state")} order by key`)
      expect(states.map((r) => r.seq)).toEqual([10, 10, 10, 10, 10])
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("evicts idle keys past its cache bound and reloads them whole", () =>
    Effect.gen(function* () {
      const schema = uniqueName("t")
      const { host, scope } = yield* start(backend, schema)
      const retryId = randomUUID()
      yield* host.send(CounterActor, "first", new Add({ amount: 4 }), meta(retryId))
      // 2 keys per partition are cached: 20 more keys push "first" out
      const others = yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => i), (i) => host.send(CounterActor, `other${i}`, new Add({ amount: 1 }), meta()))
      // only keys whose events the read model holds may go: once projected, the bound holds
      expect(yield* Effect.promise(() => host.awaitProjected(positionsOf(others), 5_000))).toBe(true)
      expect(host.ownership().cachedKeys).toBeLessThanOrEqual(2 * PARTITIONS)
      const retried = yield* host.send(CounterActor, "first", new Add({ amount: 4 }), meta(retryId))
      expect(retried).toMatchObject({ duplicate: true, seq: 1, state: { total: 4 } })
      expect(yield* host.send(CounterActor, "first", new Add({ amount: 1 }), meta())).toMatchObject({ seq: 2, state: { total: 5 } })
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("peeks at a cached state without a command: only when it holds every position the read must see", () =>
    Effect.gen(function* () {
      const schema = uniqueName("t")
      const { host, scope } = yield* start(backend, schema)
      // nothing cached for a key no command reached: the read model answers
      expect(host.peek(CounterActor, "never")).toBeUndefined()
      const first = yield* host.send(CounterActor, "p", new Add({ amount: 3 }), meta())
      // as acknowledged, before the projection holds it
      expect(host.peek(CounterActor, "p")).toEqual({ total: 3 })
      const { partition, offset } = first.position!
      expect(host.peek(CounterActor, "p", new Map([[partition, offset]]))).toEqual({ total: 3 })
      // a position past what this node appended or caught up with: not from memory
      expect(host.peek(CounterActor, "p", new Map([[partition, offset + 1_000]]))).toBeUndefined()
      // other partitions' positions say nothing of this key
      expect(host.peek(CounterActor, "p", new Map([[(partition + 1) % PARTITIONS, offset + 1_000]]))).toEqual({ total: 3 })
      const second = yield* host.send(CounterActor, "p", new Add({ amount: 1 }), meta())
      expect(host.peek(CounterActor, "p", new Map([[partition, second.position!.offset]]))).toEqual({ total: 4 })
      yield* Scope.close(scope, Exit.void)
      // a partition no longer owned: nothing from memory
      expect(host.peek(CounterActor, "p")).toBeUndefined()
    }))

  it.live("a restarted host rehydrates from the read model and goes on where the log ends", () =>
    Effect.gen(function* () {
      const schema = uniqueName("t")
      const first = yield* start(backend, schema)
      const retryId = randomUUID()
      yield* first.host.send(CounterActor, "r", new Add({ amount: 7 }), meta(retryId))
      yield* Scope.close(first.scope, Exit.void)
      const second = yield* start(backend, schema)
      const again = yield* second.host.send(CounterActor, "r", new Add({ amount: 7 }), meta(retryId))
      expect(again).toMatchObject({ duplicate: true, seq: 1, state: { total: 7 } })
      const next = yield* second.host.send(CounterActor, "r", new Add({ amount: 1 }), meta())
      expect(next).toMatchObject({ seq: 2, state: { total: 8 } })
      expect(second.host.ownership()).toMatchObject({ owned: [0, 1, 2, 3], ready: [0, 1, 2, 3] })
      yield* Scope.close(second.scope, Exit.void)
    }))
})

suite("embedded", embedded)

describe("two hosts that both believe they own every partition (a stale owner)", () => {
  const sendRetrying = (host: ActorHost.ActorHostService, id: string, amount: number, commandId: string) =>
    host.send(CounterActor, id, new Add({ amount }), meta(commandId)).pipe(
      Effect.retry({ while: (e) => e._tag === "HostUnavailable", times: 5 })
    )

  it.live("never acknowledges a write that lost the race, and a retry of it lands once", () =>
    Effect.gen(function* () {
      const schema = uniqueName("t")
      const a = yield* start(embedded, schema)
      const b = yield* start(embedded, schema)
      // b caches the key at seq 1; a then writes seq 2 behind b's back
      yield* sendRetrying(b.host, "k", 1, "b-1")
      const aWrote = yield* sendRetrying(a.host, "k", 2, "a-1")
      // a read on b that must see a's write is not answered from b's stale cache, even once b has
      // appended past a's write (another key's: the embedded log fences per key only)
      expect(b.host.peek(CounterActor, "k", positionsOf([aWrote]))).toBeUndefined()
      const partitionOfK = partitionFor(keyOf(CounterActor, "k"), PARTITIONS)
      const other = Array.from({ length: 100 }, (_, i) => `k-${i}`).find((id) => partitionFor(keyOf(CounterActor, id), PARTITIONS) === partitionOfK)!
      const bLater = yield* sendRetrying(b.host, other, 1, "b-other")
      expect(bLater.position!.offset).toBeGreaterThan(aWrote.position!.offset)
      expect(b.host.peek(CounterActor, "k", positionsOf([aWrote]))).toBeUndefined()
      expect(b.host.peek(CounterActor, "k")).toEqual({ total: 1 })
      // b decides from its stale cache: its seq 2 loses to a's and must not be acknowledged
      const lost = yield* b.host.send(CounterActor, "k", new Add({ amount: 4 }), meta("b-2")).pipe(Effect.flip)
      expect(lost).toMatchObject({ _tag: "HostUnavailable", reason: "ownership_lost" })
      // refused by the log itself, before any answer: none of its events is there
      const [{ count }] = yield* Effect.promise(() => a.db.sql`select count(*)::int as count from ${a.db.sql(`${schema}_log.log_events`)} where command_id = 'b-2'`)
      expect(count).toBe(0)
      // the client retries with the same command id: b reloads the truth and the write lands once
      expect(yield* sendRetrying(b.host, "k", 4, "b-2")).toMatchObject({ seq: 3, state: { total: 7 } })
      const again = yield* sendRetrying(a.host, "k", 4, "b-2")
      expect(again).toMatchObject({ duplicate: true, seq: 3 })
      expect(yield* Effect.promise(() => a.host.awaitProjected(positionsOf([again]), 5_000))).toBe(true)
      const [row] = yield* Effect.promise(() => a.db.sql`select total, seq from ${a.db.table("counters")} where key = 'counter:k'`)
      expect(row).toEqual({ total: 7, seq: 3 })
      yield* Scope.close(a.scope, Exit.void)
      yield* Scope.close(b.scope, Exit.void)
    }))
})
if (kafkaBrokers.length > 0) suite("kafka", kafka)

/** Until the two hosts share every partition between them, each deciding some. */
const bothReady = (a: ActorHost.ActorHostService, b: ActorHost.ActorHostService) =>
  Effect.gen(function* () {
    const ready = () => [a.ownership().ready.length, b.ownership().ready.length]
    while (ready().includes(0) || ready()[0]! + ready()[1]! < PARTITIONS) yield* Effect.sleep("100 millis")
  })

describe.skipIf(kafkaBrokers.length === 0)("records appended through the partition's owner (the hash chain's one writer)", () => {
  it.live("a host appends to a partition another host owns through that owner, and every partition's chain verifies", () =>
    Effect.gen(function* () {
      const schema = uniqueName("t")
      const a = yield* start(kafka, schema)
      const b = yield* start(kafka, schema)
      yield* bothReady(a.host, b.host)
      const remote = a.host.ownership().ready[0]
      const record = { key: `audit:${randomUUID()}`, seq: 1, firstSeq: 1, type: "test.recorded", payload: { n: 1 }, at: "2026-11-24T10:00:00.000Z", commandId: randomUUID(), actor: "system" }
      // b owns no such partition: its records travel to a, which appends them through its writer
      expect(b.host.ownership().owned).not.toContain(remote)
      const [offset] = yield* b.host.append(remote, [record])
      yield* a.host.append(remote, [{ ...record, key: `audit:${randomUUID()}`, commandId: randomUUID() }])
      yield* b.host.send(CounterActor, "chained", new Add({ amount: 1 }), meta())
      const reports = yield* verifyLog().pipe(Effect.provide(a.context))
      expect(reports.filter((r) => r.break !== undefined || r.unchained > 0)).toEqual([])
      expect(reports.find((r) => r.partition === remote)!.events).toBeGreaterThanOrEqual(2)
      expect(offset).toBeGreaterThanOrEqual(0)
      yield* Scope.close(b.scope, Exit.void)
      yield* Scope.close(a.scope, Exit.void)
    }))
})

describe.skipIf(kafkaBrokers.length === 0)("ready partitions, announced", () => {
  it.live("a host tells its subscribers the partitions it has caught up, and again when a rebalance takes some", () =>
    Effect.gen(function* () {
      const schema = uniqueName("t")
      const a = yield* start(kafka, schema)
      const told: Array<ReadonlyArray<number>> = []
      const fiber = yield* Effect.fork(Stream.runForEach(a.host.readyChanges, (ready) => Effect.sync(() => told.push(ready))))
      while (told.at(-1)?.length !== PARTITIONS) yield* Effect.sleep("50 millis")
      expect(told.at(-1)).toEqual(allPartitions(PARTITIONS))
      const b = yield* start(kafka, schema)
      yield* bothReady(a.host, b.host)
      yield* Effect.sleep("200 millis")
      // what it was told last is what it holds: some, not all, and none of b's
      expect(told.at(-1)).toEqual(a.host.ownership().ready)
      expect(told.at(-1)!.length).toBeLessThan(PARTITIONS)
      // told only on a change
      for (let i = 1; i < told.length; i++) expect(told[i]).not.toEqual(told[i - 1])
      yield* Fiber.interrupt(fiber)
      yield* Scope.close(b.scope, Exit.void)
      yield* Scope.close(a.scope, Exit.void)
    }))
})

describe.skipIf(kafkaBrokers.length === 0)("positions projected on another node", () => {
  it.live("a host awaits a position on a partition another host projects, settled by that projector's commit", () =>
    Effect.gen(function* () {
      const schema = uniqueName("t")
      const a = yield* start(kafka, schema)
      const b = yield* start(kafka, schema)
      yield* bothReady(a.host, b.host)
      // a key of a partition a owns, decided by a at b's request
      let id = 0
      while (!a.host.ownership().ready.includes(partitionFor(keyOf(CounterActor, `remote-${id}`), PARTITIONS))) id++
      const answer = yield* b.host.send(CounterActor, `remote-${id}`, new Add({ amount: 3 }), meta())
      expect(b.host.ownership().owned).not.toContain(answer.position!.partition)
      expect(b.host.unprojected().get(answer.position!.partition)).toBe(answer.position!.offset)
      const started = Date.now()
      expect(yield* Effect.promise(() => b.host.awaitProjected(positionsOf([answer]), 5_000))).toBe(true)
      expect(Date.now() - started).toBeLessThan(2_000)
      const [row] = yield* Effect.promise(() => b.db.sql`select total from ${b.db.table("counters")} where key = ${keyOf(CounterActor, `remote-${id}`)}`)
      expect(row).toEqual({ total: 3 })
      expect(b.host.unprojected().has(answer.position!.partition)).toBe(false)
      yield* Scope.close(b.scope, Exit.void)
      yield* Scope.close(a.scope, Exit.void)
    }))
})
