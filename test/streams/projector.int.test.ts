/**
 * The projection rule under a race for one key: an event applies when its seq is the key's last
 * seq + 1, and a command applies all or nothing, whatever the batch boundaries.
 */
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { encodeEvent, keyOf, kindRegistry } from "../../actors/kernel.ts"
import { connect, migrate, service } from "../../streams/Db.ts"
import * as EmbeddedLog from "../../streams/EmbeddedLog.ts"
import { EventLog, type EventRecord } from "../../streams/EventLog.ts"
import { applyBatch, ProjectedStates } from "../../streams/Projector.ts"
import { replay } from "../../streams/Replay.ts"
import { Added, CounterActor, countersTable } from "../support/counter.ts"
import { databaseUrl, uniqueName } from "../support/env.ts"

const key = keyOf(CounterActor, "raced")

const added = (seq: number, firstSeq: number, commandId: string, amount: number, total: number): EventRecord => ({
  key,
  seq,
  firstSeq,
  ...encodeEvent(CounterActor, new Added({ amount, total })),
  at: "2026-11-22T12:00:00.000Z",
  commandId,
  actor: "system"
})

describe.each([
  ["large batches", 2000],
  ["one event per batch", 1]
])("projection of a raced key, %s", (_, batchSize) => {
  it("rejects every event of the command that lost the race, and applies the winner's next one", async () => {
    const schema = uniqueName("t")
    const db = service(connect({ url: databaseUrl, schema, max: 2 }), schema)
    try {
      await Effect.runPromise(migrate(db.sql, schema))
      await db.sql.unsafe(countersTable(schema))
      const log = Layer.scoped(EventLog, EmbeddedLog.make(db.sql, { logSchema: `${schema}_log`, partitions: 2, batchSize }))
      const program = Effect.gen(function* () {
        const events = yield* EventLog
        // the second line of defence: a log without the append's seq fence (one written before it
        // existed, or a writer that bypasses it) must still fold the same way
        yield* Effect.promise(() => db.sql.unsafe(`drop index ${schema}_log.log_events_key_seq`))
        yield* events.append(key, [added(1, 1, "owner-1", 5, 5)])
        // a stale owner that never saw owner-1 writes a two-event command from seq 1
        yield* events.append(key, [added(1, 1, "stale", 1, 1), added(2, 1, "stale", 2, 3)])
        // the owner goes on from its own seq 1
        yield* events.append(key, [added(2, 2, "owner-2", 10, 15)])
        // the stale owner's client retries its command, which is decided afresh on the true state
        yield* events.append(key, [added(3, 3, "stale", 1, 16), added(4, 3, "stale", 2, 18)])
        return yield* replay(db, kindRegistry([CounterActor]))
      })
      await Effect.runPromise(program.pipe(Effect.provide(log)))
      const [row] = await db.sql`select total, seq from ${db.table("counters")} where key = ${key}`
      expect(row).toEqual({ total: 18, seq: 4 })
      const [state] = await db.sql`select seq, recent_commands from ${db.table("actor_state")} where key = ${key}`
      expect(state).toEqual({ seq: 4, recent_commands: ["owner-1", "owner-2", "stale"] })
    } finally {
      await db.sql.end()
    }
  })
})

describe("a runner's memory of the states it folded", () => {
  const at = (offset: number, record: EventRecord) => ({ ...record, partition: 0, offset, prev: null, hash: null })

  it("serves the next batch while the checkpoint is where the runner left it, and is not trusted once another runner moved it", async () => {
    const schema = uniqueName("t")
    const db = service(connect({ url: databaseUrl, schema, max: 2 }), schema)
    const kinds = kindRegistry([CounterActor])
    const chunk = (offset: number, record: EventRecord) => [{ partition: 0, events: [at(offset, record)], next: offset + 1 }]
    const stateReads = () => statements.filter((text) => text.includes("actor_state") && text.trimStart().startsWith("select")).length
    const statements: Array<string> = []
    const counted = service(connect({ url: databaseUrl, schema, max: 1 }, (text) => statements.push(text)), schema)
    try {
      await Effect.runPromise(migrate(db.sql, schema))
      await db.sql.unsafe(countersTable(schema))
      const remembered = new ProjectedStates()
      await applyBatch(counted, kinds, chunk(0, added(1, 1, "c-1", 5, 5)), undefined, false, remembered)
      expect(stateReads()).toBe(1)
      // the runner's own checkpoint: the state it folded is the one it goes on from, unread
      await applyBatch(counted, kinds, chunk(1, added(2, 2, "c-2", 1, 6)), undefined, false, remembered)
      expect(stateReads()).toBe(1)
      // another runner (a new owner) folds the next event: the checkpoint moves past the runner's
      await applyBatch(db, kinds, chunk(2, added(3, 3, "c-3", 10, 16)), undefined, false)
      // a stale runner re-delivering offset 2 is skipped by the checkpoint; offset 3 applies on the
      // state as the other runner left it (seq 3), read again, not on the remembered seq 2
      await applyBatch(counted, kinds, [{ partition: 0, events: [at(2, added(3, 3, "c-3", 10, 16)), at(3, added(4, 4, "c-4", 2, 18))], next: 4 }], undefined, false, remembered)
      expect(stateReads()).toBe(2)
      const [row] = await db.sql`select total, seq from ${db.table("counters")} where key = ${key}`
      expect(row).toEqual({ total: 18, seq: 4 })
      const [state] = await db.sql`select seq, recent_commands from ${db.table("actor_state")} where key = ${key}`
      expect(state).toEqual({ seq: 4, recent_commands: ["c-1", "c-2", "c-3", "c-4"] })
    } finally {
      await counted.sql.end()
      await db.sql.end()
    }
  })
})
