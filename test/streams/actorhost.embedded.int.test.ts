import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import { randomUUID } from "node:crypto"
import { kindRegistry } from "../../actors/kernel.ts"
import * as Db from "../../src/Db.ts"
import * as ActorHost from "../../streams/ActorHost.ts"
import * as EmbeddedLog from "../../streams/EmbeddedLog.ts"
import * as LocalCluster from "../../streams/LocalCluster.ts"
import { Add, CEILING, CounterActor, countersTable } from "../support/counter.ts"
import { databaseUrl, uniqueName } from "../support/env.ts"

const PARTITIONS = 4

const hostLayer = (schema: string) => {
  const db = Db.layer({ url: databaseUrl, schema })
  const log = EmbeddedLog.layer({ logSchema: `${schema}_log`, partitions: PARTITIONS }).pipe(Layer.provide(db))
  return ActorHost.layer({ commandTimeoutMs: 5_000 }).pipe(
    Layer.provide(Layer.mergeAll(db, log, LocalCluster.layer("node-a", PARTITIONS), Layer.succeed(ActorHost.ActorKinds, kindRegistry([CounterActor])))),
    Layer.provideMerge(db)
  )
}

const meta = (commandId = randomUUID()) => ({ commandId, at: "2026-11-22T12:00:00.000Z", actor: "system" })

/** Builds the host in its own scope so a test can stop and restart it. */
const start = (schema: string) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(hostLayer(schema), scope)
    const db = context.unsafeMap.get(Db.Db.key) as Db.DbService
    yield* Effect.promise(() => db.sql.unsafe(countersTable(schema)))
    return { context, scope, db, host: context.unsafeMap.get(ActorHost.ActorHost.key) as ActorHost.ActorHostService }
  })

describe("ActorHost on the embedded log", () => {
  it.live("decides with gap-free seq, projects before replying, and ignores a retried command id", () =>
    Effect.gen(function* () {
      const schema = uniqueName("t")
      const { host, db, scope } = yield* start(schema)
      const first = yield* host.send(CounterActor, "a", new Add({ amount: 2 }), meta())
      expect(first).toMatchObject({ seq: 1, state: { total: 2 }, duplicate: false })
      const retryId = randomUUID()
      const second = yield* host.send(CounterActor, "a", new Add({ amount: 3 }), meta(retryId))
      expect(second.seq).toBe(2)
      // read-your-writes: the projection has the row before the reply
      const [row] = yield* Effect.promise(() => db.sql`select total, seq from ${db.table("counters")} where key = 'counter:a'`)
      expect(row).toEqual({ total: 5, seq: 2 })
      const retried = yield* host.send(CounterActor, "a", new Add({ amount: 3 }), meta(retryId))
      expect(retried).toMatchObject({ seq: 2, state: { total: 5 }, events: [], duplicate: true })
      const rejected = yield* host.send(CounterActor, "a", new Add({ amount: CEILING }), meta()).pipe(Effect.flip)
      expect(rejected._tag).toBe("OverCeiling")
      const [{ count }] = yield* Effect.promise(() => db.sql`select count(*)::int as count from ${db.sql(`${schema}_log.log_events`)}`)
      expect(count).toBe(2)
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("serialises concurrent commands per key: no lost update, seq 1..n", () =>
    Effect.gen(function* () {
      const schema = uniqueName("t")
      const { host, db, scope } = yield* start(schema)
      yield* Effect.forEach(Array.from({ length: 50 }, (_, i) => i), (i) => host.send(CounterActor, `k${i % 5}`, new Add({ amount: 1 }), meta()), { concurrency: "unbounded" })
      const rows = yield* Effect.promise(() => db.sql`select key, total, seq from ${db.table("counters")} order by key`)
      expect(rows.map((r) => [r.total, r.seq])).toEqual(Array.from({ length: 5 }, () => [10, 10]))
      const seqs = yield* Effect.promise(() => db.sql`select key, array_agg(seq order by "offset") as seqs from ${db.sql(`${schema}_log.log_events`)} group by key`)
      for (const r of seqs) expect(r.seqs).toEqual(Array.from({ length: 10 }, (_, i) => i + 1))
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("a restarted host rehydrates from the read model and goes on where the log ends", () =>
    Effect.gen(function* () {
      const schema = uniqueName("t")
      const first = yield* start(schema)
      const retryId = randomUUID()
      yield* first.host.send(CounterActor, "r", new Add({ amount: 7 }), meta(retryId))
      yield* Scope.close(first.scope, Exit.void)
      const second = yield* start(schema)
      const again = yield* second.host.send(CounterActor, "r", new Add({ amount: 7 }), meta(retryId))
      expect(again).toMatchObject({ duplicate: true, seq: 1, state: { total: 7 } })
      const next = yield* second.host.send(CounterActor, "r", new Add({ amount: 1 }), meta())
      expect(next).toMatchObject({ seq: 2, state: { total: 8 } })
      expect(second.host.ownership()).toEqual({ owned: [0, 1, 2, 3], ready: [0, 1, 2, 3] })
      yield* Scope.close(second.scope, Exit.void)
    }))
})
