/**
 * Replay: rebuild every read model from the log into a fresh schema, with the same projection
 * code the live nodes run, and compare two schemas table by table.
 */
import { Effect, Stream } from "effect"
import type { KindRegistry } from "../actors/kernel.ts"
import { type DbService, migrate, query } from "./Db.ts"
import { allPartitions, EventLog, readUpTo } from "./EventLog.ts"
import { applyBatch, coalesce, eventsIn } from "./Projector.ts"

export interface ReplayStats {
  readonly events: number
  readonly millis: number
}

/** Partition groups replayed side by side: they share no checkpoint row and no key. */
const LANES = 4

/** Projects the whole log, as it stands when the replay starts, into `target` (migrated first). */
export const replay = (target: DbService, kinds: KindRegistry) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const started = Date.now()
    yield* migrate(target.sql, target.schema)
    const ends = yield* log.endOffsets(allPartitions(log.partitions))
    const pending = [...ends].filter(([, end]) => end > 0).map(([p]) => p)
    const lanes = Array.from({ length: LANES }, (_, lane) => pending.filter((_, i) => i % LANES === lane)).filter((l) => l.length > 0)
    const counts = yield* Effect.forEach(lanes, (partitions) => replayLane(target, kinds, partitions, ends), { concurrency: "unbounded" })
    return { events: counts.reduce((a, b) => a + b, 0), millis: Date.now() - started } satisfies ReplayStats
  }).pipe(Effect.withSpan("Replay.replay", { attributes: { schema: target.schema } }))

const replayLane = (target: DbService, kinds: KindRegistry, partitions: ReadonlyArray<number>, ends: ReadonlyMap<number, number>) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    let events = 0
    // events appended after the start are left for the live projection
    yield* readUpTo(log, new Map(partitions.map((p) => [p, 0])), ends).pipe(
      coalesce,
      Stream.runForEach((batch) =>
        query("replay batch", () => applyBatch(target, kinds, batch)).pipe(
          Effect.tap(() => {
            events += eventsIn(batch)
          })
        )
      )
    )
    return events
  })

/** The read-model tables of a schema (what migrations made, less the migrator's own). */
export const readModelTables = (db: DbService) =>
  query("list tables", async () => {
    const rows = await db.sql`
      select table_name from information_schema.tables
      where table_schema = ${db.schema} and table_type = 'BASE TABLE' and table_name <> 'schema_migrations'
      order by table_name`
    return rows.map((r) => r.table_name as string)
  })

/** A digest of a table's rows, independent of physical order. */
export const tableDigest = (db: DbService, table: string) =>
  query(`digest ${table}`, async () => {
    const [row] = await db.sql`
      select count(*)::int as rows, coalesce(md5(string_agg(t::text, E'\n' order by t::text)), '') as digest
      from ${db.table(table)} t`
    return { rows: row.rows as number, digest: row.digest as string }
  })

export interface TableComparison {
  readonly table: string
  readonly rows: number
  readonly equal: boolean
}

/** Compares every read-model table of `a` with the same table of `b`. */
export const compareSchemas = (a: DbService, b: DbService) =>
  Effect.gen(function* () {
    const tables = yield* readModelTables(a)
    return yield* Effect.forEach(tables, (table) =>
      Effect.gen(function* () {
        const left = yield* tableDigest(a, table)
        const right = yield* tableDigest(b, table)
        return { table, rows: left.rows, equal: left.rows === right.rows && left.digest === right.digest }
      })
    )
  })
