/**
 * The embedded log's one reader (real Postgres): subscriptions at the log's end share each read
 * an append wakes them for, and one that starts behind reads from its own position, in order,
 * without holding the others back.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { connect } from "../../streams/Db.ts"
import * as EmbeddedLog from "../../streams/EmbeddedLog.ts"
import { allPartitions, type EventRecord, type LoggedEvent } from "../../streams/EventLog.ts"
import { databaseUrl, uniqueName } from "../support/env.ts"

const PARTITIONS = 3

const event = (key: string): EventRecord => ({
  key,
  seq: 1,
  firstSeq: 1,
  type: "test.happened",
  payload: {},
  at: "2026-11-28T00:00:00.000Z",
  commandId: randomUUID(),
  actor: "system"
})

describe("the embedded log's tail", () => {
  it.scopedLive("reads once for every subscription at the log's end; one behind reads for itself, from its own position", () =>
    Effect.gen(function* () {
      const schema = uniqueName("t")
      let reads = 0
      const sql = connect({ url: databaseUrl, schema }, (text) => {
        if (text.includes("log_events") && text.includes('"offset" >=')) reads++
      })
      yield* Effect.addFinalizer(() => Effect.promise(() => sql.end()))
      // no poll during the test: only appends wake the subscriptions
      const log = yield* EmbeddedLog.make(sql, { logSchema: `${schema}_log`, partitions: PARTITIONS, pollMs: 60_000 })
      const heard = (from: ReadonlyMap<number, number>) =>
        Effect.gen(function* () {
          const events: Array<LoggedEvent> = []
          yield* Effect.forkScoped(Stream.runForEach(log.subscribe(from), (chunk) => Effect.sync(() => events.push(...chunk.events))))
          return events
        })
      const until = (done: () => boolean) => Effect.repeat(Effect.sleep("5 millis"), { until: done })

      yield* Effect.forEach(["a", "b", "c"], (id) => log.append(id, [event(id)]))
      const ends = yield* log.endOffsets(allPartitions(PARTITIONS))
      const atEnd = yield* Effect.forEach([1, 2, 3], () => heard(ends))
      yield* Effect.sleep("200 millis")

      const before = reads
      yield* log.append("d", [event("d")])
      yield* until(() => atEnd.every((events) => events.length === 1))
      // the three subscriptions asked for the same read at once
      expect(reads - before).toBe(1)
      expect(atEnd.map((events) => events.map((e) => e.key))).toEqual([["d"], ["d"], ["d"]])

      const behind = yield* heard(new Map(allPartitions(PARTITIONS).map((p) => [p, 0])))
      yield* log.append("e", [event("e")])
      yield* until(() => behind.length === 5 && atEnd.every((events) => events.length === 2))
      expect(atEnd.map((events) => events.map((e) => e.key))).toEqual([["d", "e"], ["d", "e"], ["d", "e"]])
      expect(behind.map((e) => e.key).sort()).toEqual(["a", "b", "c", "d", "e"])
      for (const partition of allPartitions(PARTITIONS)) {
        const offsets = behind.filter((e) => e.partition === partition).map((e) => e.offset)
        expect(offsets).toEqual(offsets.map((_, i) => i))
      }
    })
  )
})
