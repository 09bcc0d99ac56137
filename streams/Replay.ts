/**
 * Replay: rebuild every read model from the log into a fresh schema, with the same projection
 * code the live nodes run, and compare two schemas table by table. A point-in-time replay
 * (`Until`) rebuilds them as they stood at a past moment, for an auditor to query.
 */
import { Effect, Stream } from "effect"
import type { KindRegistry } from "../actors/kernel.ts"
import { type DbService, migrate, query } from "./Db.ts"
import { allPartitions, EventLog, type LogChunk, readUpTo } from "./EventLog.ts"
import { applyBatch, coalesce, eventsIn, makeColumnTypes, readCheckpoints } from "./Projector.ts"

/**
 * Where a point-in-time replay stops: at a time (each partition up to its first event recorded
 * later; an event's time is its command's), or at log positions (each named partition through the
 * offset given; a partition not named contributes nothing).
 */
export type Until =
  | { readonly _tag: "time"; readonly at: number }
  | { readonly _tag: "positions"; readonly through: ReadonlyMap<number, number> }

/** `--until`: an RFC 3339 time with its offset, or `partition:offset` pairs separated by commas. */
export const parseUntil = (text: string): Until | undefined => {
  if (/^\d+:\d+(,\d+:\d+)*$/.test(text)) {
    const through = new Map<number, number>()
    for (const pair of text.split(",")) {
      const [partition, offset] = pair.split(":").map(Number)
      through.set(partition, Math.max(offset, through.get(partition) ?? -1))
    }
    return { _tag: "positions", through }
  }
  const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/
  const at = Date.parse(text)
  return rfc3339.test(text) && !Number.isNaN(at) ? { _tag: "time", at } : undefined
}

/**
 * Where a log, read in order, stops at a time: each partition keeps the prefix of its events
 * recorded up to it, and nothing from its first event recorded later on. One cut per read.
 */
export const cutAtTime = (at: number) => {
  const past = new Set<number>()
  return (chunk: LogChunk): LogChunk => {
    if (past.has(chunk.partition)) return { ...chunk, events: [] }
    const later = chunk.events.findIndex((e) => Date.parse(e.at) > at)
    if (later === -1) return chunk
    past.add(chunk.partition)
    return { ...chunk, events: chunk.events.slice(0, later) }
  }
}

/** The end (exclusive) a point-in-time read of `partition` stops at, given the log's end there. */
export const endAt = (until: Until | undefined, partition: number, end: number): number =>
  until?._tag === "positions" ? Math.min(end, (until.through.get(partition) ?? -1) + 1) : end

export interface ReplayStats {
  readonly events: number
  readonly millis: number
}

/** Partition groups replayed side by side: they share no checkpoint row and no key. */
const LANES = 4

/**
 * Projects the whole log, as it stands when the replay starts, into `target` (migrated first); or,
 * given `until`, the log as it stood then.
 */
export const replay = (target: DbService, kinds: KindRegistry, until?: Until) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const started = Date.now()
    yield* migrate(target.sql, target.schema)
    const current = yield* log.endOffsets(allPartitions(log.partitions))
    const ends = new Map([...current].map(([p, end]) => [p, endAt(until, p, end)]))
    const pending = [...ends].filter(([, end]) => end > 0).map(([p]) => p)
    const lanes = Array.from({ length: LANES }, (_, lane) => pending.filter((_, i) => i % LANES === lane)).filter((l) => l.length > 0)
    const counts = yield* Effect.forEach(lanes, (partitions) => replayLane(target, kinds, partitions, ends, until?._tag === "time" ? until.at : undefined), { concurrency: "unbounded" })
    return { events: counts.reduce((a, b) => a + b, 0), millis: Date.now() - started } satisfies ReplayStats
  }).pipe(Effect.withSpan("Replay.replay", { attributes: { schema: target.schema } }))

const replayLane = (target: DbService, kinds: KindRegistry, partitions: ReadonlyArray<number>, ends: ReadonlyMap<number, number>, untilTime?: number) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const columnTypes = makeColumnTypes()
    let events = 0
    const upToTime = untilTime === undefined ? (chunk: LogChunk) => chunk : cutAtTime(untilTime)
    // events appended after the start are left for the live projection
    yield* readUpTo(log, new Map(partitions.map((p) => [p, 0])), ends).pipe(
      Stream.map(upToTime),
      coalesce,
      Stream.runForEach((batch) =>
        query("replay batch", () => applyBatch(target, kinds, batch, columnTypes)).pipe(
          Effect.tap(() => {
            events += eventsIn(batch)
          })
        )
      )
    )
    return events
  })

/**
 * Projects the log into the live read models from their checkpoints up to the log's end as it
 * stands (what a node stopped before its projection folded it, or one still running, left
 * behind); the ends, and how many log positions the read models were behind them. Safe beside
 * running nodes: a batch locks its partitions' checkpoint rows and applies only what lies past them.
 */
export const projectToEnd = (live: DbService, kinds: KindRegistry) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const ends = yield* log.endOffsets(allPartitions(log.partitions))
    const from = yield* readCheckpoints(live, allPartitions(log.partitions))
    const behind = [...ends].reduce((n, [p, end]) => n + Math.max(0, end - from.get(p)!), 0)
    const columnTypes = makeColumnTypes()
    yield* readUpTo(log, from, ends).pipe(
      coalesce,
      Stream.runForEach((batch) => query("catch-up batch", () => applyBatch(live, kinds, batch, columnTypes)))
    )
    return { ends, behind }
  })

/** Tables of the read-model schema that no event projects: the migrator's, how far the reactions
 * to the log got (a replay starts none), and what the running nodes report of themselves. */
const NOT_PROJECTED = ["schema_migrations", "reaction_offsets", "cluster_nodes", "person_keys"]

/** The read-model tables of a schema (what migrations made, less what no event projects). */
export const readModelTables = (db: DbService) =>
  query("list tables", async () => {
    const rows = await db.sql`
      select table_name from information_schema.tables
      where table_schema = ${db.schema} and table_type = 'BASE TABLE' and table_name not in ${db.sql(NOT_PROJECTED)}
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
