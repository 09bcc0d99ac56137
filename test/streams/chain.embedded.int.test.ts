/**
 * The embedded log's hash chain: what `svc audit verify` finds when someone edits the log table.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { generateKeyPairSync, randomUUID } from "node:crypto"
import { GENESIS, hashOf } from "../../streams/Chain.ts"
import { makeSigner } from "../../streams/Checkpoints.ts"
import * as Db from "../../streams/Db.ts"
import * as EmbeddedLog from "../../streams/EmbeddedLog.ts"
import { EventLog, type EventRecord } from "../../streams/EventLog.ts"
import { verifyLog } from "../../streams/LogVerify.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { databaseUrl, uniqueName } from "../support/env.ts"
import { readToEnd } from "../support/log.ts"

const schema = uniqueName("t")
const logSchema = `${schema}_log`
const PARTITIONS = 3
const db = Db.layer({ url: databaseUrl, schema })
const logLayer = EmbeddedLog.layer({ logSchema, partitions: PARTITIONS }).pipe(Layer.provideMerge(db))

const record = (key: string, seq: number, payload: unknown = { n: seq, b: "x", a: [1, { z: 1, y: 2 }] }): EventRecord => ({
  key,
  seq,
  firstSeq: seq,
  type: "test.happened",
  payload,
  at: "2026-11-24T10:00:00.000Z",
  commandId: randomUUID(),
  actor: "system"
})

/** Keys of one partition, so a test's events share a chain. */
const keysOn = (partition: number, count: number) => {
  const keys: Array<string> = []
  for (let i = 0; keys.length < count; i++) {
    const key = `chain:${randomUUID()}:${i}`
    if (partitionFor(key, PARTITIONS) === partition) keys.push(key)
  }
  return keys
}

const table = (sql: Db.DbService["sql"]) => sql(`${logSchema}.log_events`)

layer(logLayer, { timeout: "60 seconds", excludeTestServices: true })("embedded log hash chain", (it) => {
  it.effect("chains every event onto the one before, whoever appends: the shared append, the partition's writer, another process", () =>
    Effect.gen(function* () {
      const log = yield* EventLog
      const { sql } = yield* Db.Db
      const [a, b, c] = keysOn(0, 3)
      yield* log.append(a, [record(a, 1), record(a, 2)])
      const writer = yield* log.openWriter(0)
      yield* writer.append([record(b, 1)])
      // a second appender on the same table (as `svc issue-key` in its own process) moves the head
      // under this one, which chains onto where the head is then
      const other = yield* EmbeddedLog.make(sql, { logSchema, partitions: PARTITIONS })
      yield* other.append(c, [record(c, 1)])
      yield* writer.append([record(b, 2)])
      yield* other.append(c, [record(c, 2)])
      yield* log.append(a, [record(a, 3)])

      const events = yield* readToEnd(0, 0)
      expect(events.map((e) => e.key)).toEqual([a, a, b, c, b, c, a])
      let prev = GENESIS
      for (const event of events) {
        expect(event.prev).toBe(prev)
        expect(event.hash).toBe(hashOf(prev, event))
        prev = event.hash!
      }
      const [report] = yield* verifyLog({ partitions: [0] })
      expect(report).toMatchObject({ partition: 0, events: 7, unchained: 0, head: prev, break: undefined })
    }).pipe(Effect.scoped))

  it.effect("finds an event whose payload was changed in the table, at its partition and offset", () =>
    Effect.gen(function* () {
      const log = yield* EventLog
      const { sql } = yield* Db.Db
      const [key] = keysOn(1, 1)
      const offsets = yield* log.append(key, [1, 2, 3, 4].map((seq) => record(key, seq)))
      expect((yield* verifyLog({ partitions: [1] }))[0].break).toBeUndefined()

      yield* Effect.promise(() => sql`update ${table(sql)} set payload = '{"n": 99}' where partition = 1 and "offset" = ${offsets[2]}`)
      const [report] = yield* verifyLog({ partitions: [1] })
      expect(report.break).toMatchObject({ partition: 1, offset: offsets[2], reason: "hash_mismatch" })

      // the same content, keys in another order, is the same event: jsonb's order does not matter
      yield* Effect.promise(() =>
        sql`update ${table(sql)} set payload = ${sql.json({ a: [1, { y: 2, z: 1 }], b: "x", n: 3 })} where partition = 1 and "offset" = ${offsets[2]}`
      )
      expect((yield* verifyLog({ partitions: [1] }))[0].break).toBeUndefined()
    }))

  it.effect("finds events removed from a partition's end, and a removed event, at its offset", () =>
    Effect.gen(function* () {
      const log = yield* EventLog
      const { sql } = yield* Db.Db
      const [key] = keysOn(2, 1)
      const offsets = yield* log.append(key, [1, 2, 3, 4, 5].map((seq) => record(key, seq)))
      yield* Effect.promise(() => sql`delete from ${table(sql)} where partition = 2 and "offset" = ${offsets[4]}`)
      const [truncated] = yield* verifyLog({ partitions: [2], idleMs: 1_000 })
      expect(truncated.break).toMatchObject({ partition: 2, offset: offsets[4], reason: "truncated" })

      yield* Effect.promise(() => sql`delete from ${table(sql)} where partition = 2 and "offset" = ${offsets[1]}`)
      const [report] = yield* verifyLog({ partitions: [2], idleMs: 1_000 })
      expect(report.break).toMatchObject({ partition: 2, offset: offsets[1], reason: "missing" })

      // the chain, not the offsets, catches a removal that renumbers what follows
      yield* Effect.promise(() => sql`update ${table(sql)} set "offset" = "offset" - 1 where partition = 2 and "offset" > ${offsets[1]}`)
      const [renumbered] = yield* verifyLog({ partitions: [2], idleMs: 1_000 })
      expect(renumbered.break).toMatchObject({ partition: 2, offset: offsets[1], reason: "prev_mismatch" })
    }))

  it.effect("finds an event inserted by someone else than the platform", () =>
    Effect.gen(function* () {
      const log = yield* EventLog
      const { sql } = yield* Db.Db
      const [key] = keysOn(0, 1)
      yield* log.append(key, [record(key, 1)])
      const end = (yield* log.endOffsets([0])).get(0)!
      // a forger who knows the scheme chains onto the head: the platform's next event does not
      const [{ head_hash: head }] = yield* Effect.promise(() => sql`select head_hash from ${sql(`${logSchema}.log_heads`)} where partition = 0`)
      const forged = record(key, 2)
      const forgedHash = hashOf(head, forged)
      yield* Effect.promise(() => sql`
        update ${sql(`${logSchema}.log_heads`)} set next_offset = next_offset + 1 where partition = 0`)
      yield* Effect.promise(() => sql`
        insert into ${table(sql)} (partition, "offset", key, seq, first_seq, type, payload, at, command_id, actor, prev_hash, hash)
        values (0, ${end}, ${key}, 2, 2, ${forged.type}, ${sql.json(forged.payload as never)}, ${forged.at}, ${forged.commandId}, 'system', ${head}, ${forgedHash})`)
      const offsets = yield* log.append(key, [record(key, 3)])
      expect(offsets[0]).toBe(end + 1)
      const [report] = yield* verifyLog({ partitions: [0] })
      expect(report.break).toMatchObject({ partition: 0, offset: end + 1, reason: "prev_mismatch" })
    }))

  it.effect("finds a signed checkpoint naming a hash the chain does not hold there", () =>
    Effect.gen(function* () {
      const log = yield* EventLog
      const signer = makeSigner(generateKeyPairSync("ed25519").privateKey, { events: 1, seconds: 1 })
      const [key] = keysOn(2, 1)
      const writer = yield* log.openWriter(2)
      const [offset] = yield* writer.append([record(key, 1)])
      const at = "2026-11-24T10:00:00.000Z"
      const [checkpoint] = yield* writer.append([signer.record({ partition: 2, offset, head: "f".repeat(64), at })])
      const [report] = yield* verifyLog({ partitions: [2], publicKey: signer.publicKey, from: offset })
      expect(report.break).toMatchObject({ partition: 2, offset: checkpoint, reason: "checkpoint_mismatch" })
    }).pipe(Effect.scoped))

  it.effect("finds an event written without a hash, at its offset", () =>
    Effect.gen(function* () {
      const log = yield* EventLog
      const { sql } = yield* Db.Db
      const [key] = keysOn(1, 1)
      yield* log.append(key, [record(key, 1)])
      const [{ first }] = yield* Effect.promise(() => sql`
        update ${sql(`${logSchema}.log_heads`)} set next_offset = next_offset + 1 where partition = 1 returning next_offset - 1 as first`)
      yield* Effect.promise(() => sql`
        insert into ${table(sql)} (partition, "offset", key, seq, first_seq, type, payload, at, command_id, actor)
        values (1, ${first}, ${key}, 2, 2, 'test.happened', '{}', '2026-11-24T10:00:00.000Z', 'forged', 'system')`)
      const [report] = yield* verifyLog({ partitions: [1] })
      expect(report.break).toMatchObject({ partition: 1, offset: Number(first), reason: "unchained" })
    }))
})
