/**
 * One key's state as of a moment, folded from the log (`streams/AsOf.ts`): only its own events, by
 * the projection's rule (a stale owner's command that lost the race is skipped), cut at a log
 * position or a time as a point-in-time replay cuts; the future and the time before the key are
 * told apart, and a key never the reader's is unknown.
 */
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { encodeEvent, keyOf } from "../../actors/kernel.ts"
import { stateAsOf } from "../../streams/AsOf.ts"
import { connect, service } from "../../streams/Db.ts"
import * as EmbeddedLog from "../../streams/EmbeddedLog.ts"
import { EventLog, type EventRecord } from "../../streams/EventLog.ts"
import { parseUntil } from "../../streams/Replay.ts"
import { Added, CounterActor } from "../support/counter.ts"
import { databaseUrl, uniqueName } from "../support/env.ts"

const key = keyOf(CounterActor, "raced")

const added = (of: string, seq: number, firstSeq: number, commandId: string, total: number, at: string): EventRecord => ({
  key: of,
  seq,
  firstSeq,
  ...encodeEvent(CounterActor, new Added({ amount: 1, total })),
  at,
  commandId,
  actor: "system"
})

describe("a key's state as of a moment", () => {
  it("folds its own events up to a position or a time, skipping the command that lost a race", async () => {
    const schema = uniqueName("t")
    const db = service(connect({ url: databaseUrl, schema, max: 2 }), schema)
    const log = Layer.scoped(EventLog, EmbeddedLog.make(db.sql, { logSchema: `${schema}_log`, partitions: 1, batchSize: 2 }))
    const now = Date.parse("2026-11-22T13:00:00.000Z")
    const read = (moment: string, belongs = true) => stateAsOf(CounterActor, "raced", parseUntil(moment)!, now, () => belongs)
    try {
      // one log for the whole test: opening it again would build the seq fence over the race again
      await Effect.runPromise(
        Effect.gen(function* () {
          const events = yield* EventLog
          const first = yield* events.append(key, [added(key, 1, 1, "owner-1", 5, "2026-11-22T12:00:01.000Z")])
          // the append's seq fence dropped: the fold must hold the line by itself against a stale owner
          yield* Effect.promise(() => db.sql.unsafe(`drop index ${schema}_log.log_events_key_seq`))
          const stale = yield* events.append(key, [added(key, 1, 1, "stale", 1, "2026-11-22T12:00:02.000Z"), added(key, 2, 1, "stale", 3, "2026-11-22T12:00:02.000Z")])
          const other = yield* events.append(key, [added(keyOf(CounterActor, "other"), 1, 1, "other-1", 100, "2026-11-22T12:00:02.500Z")])
          const second = yield* events.append(key, [added(key, 2, 2, "owner-2", 15, "2026-11-22T12:00:03.000Z")])
          const retried = yield* events.append(key, [added(key, 3, 3, "stale", 16, "2026-11-22T12:00:04.000Z"), added(key, 4, 3, "stale", 18, "2026-11-22T12:00:04.000Z")])
          const offsets = { first: first[0]!, stale: stale[1]!, other: other[0]!, second: second[0]!, last: retried[1]! }

          const folded = (total: number) => ({ _tag: "Folded", state: { total } })
          expect(yield* read(`0:${offsets.first}`)).toMatchObject(folded(5))
          expect(yield* read(`0:${offsets.stale}`)).toMatchObject(folded(5))
          expect(yield* read(`0:${offsets.other}`)).toMatchObject(folded(5))
          expect(yield* read(`0:${offsets.second}`)).toMatchObject(folded(15))
          expect(yield* read(`0:${offsets.last}`)).toMatchObject(folded(18))
          expect(yield* read("2026-11-22T12:00:03.000Z")).toMatchObject(folded(15))
          expect(yield* read("2026-11-22T12:00:03.999Z")).toMatchObject(folded(15))
          expect(yield* read("2026-11-22T12:30:00.000Z")).toMatchObject(folded(18))
          // the rows its events project up to the moment, as the live projection writes them
          const projected = yield* read(`0:${offsets.second}`)
          expect(projected._tag === "Folded" ? projected.rows.map((op) => op.row.total) : projected).toEqual([5, 15])

          expect(yield* read("2026-11-22T12:00:00.999Z")).toEqual({ _tag: "Before", partition: 0 })
          expect(yield* read("3:7")).toEqual({ _tag: "Before", partition: 0 })
          expect(yield* read("2026-11-22T13:00:00.001Z")).toMatchObject({ _tag: "Future" })
          expect(yield* read(`0:${offsets.last + 1}`)).toEqual({ _tag: "Future", partition: 0, end: offsets.last + 1 })
          expect(yield* read(`0:${offsets.second}`, false)).toEqual({ _tag: "Unknown" })
        }).pipe(Effect.provide(log))
      )
    } finally {
      await db.sql.end()
    }
  })
})
