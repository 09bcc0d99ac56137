/**
 * The embedded adapter of the log: an append-only table in the same Postgres, the default when no
 * Kafka brokers are configured. Offsets are allocated per partition under a row lock on the
 * partition's head, so concurrent appenders (even other processes) keep each partition dense
 * and ordered.
 *
 * Group commit, per partition (`GroupCommit.ts`): appends to a partition that arrive while a
 * commit to it is in flight go together in its next one, one statement and one fsync for all of
 * them. Partitions commit independently, in parallel. Each append still gets consecutive offsets,
 * in the order the appends arrived, and is acknowledged only once its statement has committed.
 *
 * The hash chain (`Chain.ts`): each partition's head hash lives in its `log_heads` row, beside its
 * next offset, and the append's statement moves both together, under the row lock, only if the
 * head is still the one the events were chained onto. Every appender (the partition worker, the
 * audit writer, another process such as `svc issue-key`) therefore chains onto the one head. Each
 * process keeps the heads it last wrote in memory; when another appender moved a head meanwhile,
 * the statement writes nothing, and the append reads the head and chains again.
 */
import { Context, Effect, Layer, type Scope, Stream } from "effect"
import { EventEmitter } from "node:events"
import postgres from "postgres"
import { Db } from "./Db.ts"
import { chain, GENESIS } from "./Chain.ts"
import { allPartitions, EventLog, type EventLogService, type EventRecord, type LogChunk, LogError, LogFenced, type LoggedEvent } from "./EventLog.ts"
import * as GroupCommit from "./GroupCommit.ts"
import { partitionFor } from "./partitioner.ts"

export interface EmbeddedLogOptions {
  /** Schema holding the log tables; kept apart from the read models so a replay can drop those. */
  readonly logSchema: string
  readonly partitions: number
  /** How often a quiet subscriber looks for appends made by other processes. */
  readonly pollMs?: number
  /** Largest chunk a subscriber emits. */
  readonly batchSize?: number
  /**
   * False: append without the hash chain (no hashes, no head), only to measure what the chain
   * costs (bench/log.ts). The platform always chains.
   */
  readonly chained?: boolean
}

/**
 * Appends wake the subscribers of every embedded log built with the same `Appends` at once (one
 * channel per log schema); other appenders (another process, a log made with an `Appends` of its
 * own) are found by polling. `layer` shares one `Appends` per layer build, so the logs of one
 * node or one CLI command wake each other, as they did when this was one emitter per process.
 */
export class Appends extends Context.Tag("svc/streams/EmbeddedLog/Appends")<Appends, EventEmitter>() {}

const makeAppends = (): EventEmitter => new EventEmitter().setMaxListeners(0)

/** One `Appends` for every embedded log of a layer build (layers are memoized by reference). */
export const appendsLayer: Layer.Layer<Appends> = Layer.sync(Appends, makeAppends)

interface EventRow {
  partition: number
  offset: number
  key: string
  seq: number
  first_seq: number
  type: string
  payload: unknown
  at: string
  command_id: string
  actor: string
  prev_hash: string | null
  hash: string | null
}

const fail = (operation: string) => (cause: unknown) =>
  new LogError({ operation, message: `${operation} failed: ${String(cause)}`, cause })

const UNIQUE_VIOLATION = "23505"

/** Appends one commit may carry, and events (one statement's arrays stay moderate); the rest wait for the next. */
const MAX_APPENDS_PER_COMMIT = 500
const MAX_EVENTS_PER_COMMIT = 10_000

/** One append's outcome within its group. */
type Appended = { readonly offsets: ReadonlyArray<number> } | { readonly error: unknown }

/** The log's tables and its wake-up channel, under one log schema. */
const tablesOf = (sql: postgres.Sql, logSchema: string) => ({
  sql,
  logSchema,
  events: sql(`${logSchema}.log_events`),
  heads: sql(`${logSchema}.log_heads`),
  channel: `log:${logSchema}`
})
type Tables = ReturnType<typeof tablesOf>

const createTables = ({ sql, logSchema, events, heads, channel }: Tables, partitions: number): Effect.Effect<void, LogError> =>
  Effect.tryPromise({
    try: () =>
      sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(hashtext(${channel}))`
        await tx.unsafe(`create schema if not exists ${logSchema}`)
        await tx`create table if not exists ${events} (
          partition integer not null,
          "offset" bigint not null,
          key text not null,
          seq integer not null,
          first_seq integer not null,
          type text not null,
          payload jsonb not null,
          at text not null,
          command_id text not null,
          actor text not null,
          recorded_at timestamptz not null default now(),
          primary key (partition, "offset"))`
        // the fence: a key's seq is written once, so a stale writer's append is refused whole
        await tx`create unique index if not exists log_events_key_seq on ${events} (key, seq)`
        await tx`create table if not exists ${heads} (partition integer primary key, next_offset bigint not null)`
        // the chain (issue 15); a log written before it keeps its unchained events, and its
        // chain starts at the next append (head null: from GENESIS)
        await tx`alter table ${events} add column if not exists prev_hash text, add column if not exists hash text`
        await tx`alter table ${heads} add column if not exists head_hash text`
        await tx`insert into ${heads} (partition, next_offset)
          select p, 0 from generate_series(0, ${partitions - 1}::int) as p on conflict do nothing`
        const [{ count }] = await tx`select count(*)::int as count from ${heads}`
        if (count !== partitions) {
          throw new Error(`log ${logSchema} has ${count} partitions, configured ${partitions}`)
        }
      }),
    catch: fail("create embedded log")
  })

/**
 * The chained writer: appends a group's events to one partition in one statement, chained onto
 * the partition's head. Keeps the heads this process last wrote or read.
 */
const makeChainWriter = ({ sql, logSchema, events, heads }: Tables, chained: boolean) => {
  /** The head hash of each partition as this process last wrote or read it (null: no chained event yet). */
  const chainHeads = new Map<number, string | null>()
  /** The last event this process appended per partition, with its offset. */
  const appendedHeads = new Map<number, { readonly offset: number; readonly hash: string }>()
  const readHead = async (partition: number): Promise<string | null> => {
    const [row] = await sql`select head_hash from ${heads} where partition = ${partition}`
    if (row === undefined) throw new Error(`log ${logSchema} has no head for partition ${partition}`)
    return row.head_hash as string | null
  }

  /**
   * Appends a group's events to one partition in one statement, chained onto the partition's
   * head; the offset of its first event. The statement writes nothing when the head it chained
   * onto is no longer the head (another appender wrote first): then it reads the head and goes again.
   */
  const write = async (partition: number, records: ReadonlyArray<EventRecord>): Promise<number> => {
    const n = records.length
    const payloads = records.map((r) => JSON.stringify(r.payload))
    for (;;) {
      if (chained && !chainHeads.has(partition)) chainHeads.set(partition, await readHead(partition))
      const expected = chainHeads.get(partition) ?? null
      const linked = chained ? chain(expected ?? GENESIS, records) : undefined
      // each event's prev is the hash before it: the statement takes it from the array itself
      const hashes = linked === undefined ? records.map(() => null) : linked.hashes
      const last = linked?.head ?? null
      // one statement: the head row lock orders concurrent appends to the partition
      const [head] = await sql`
        with head as (
          update ${heads} set next_offset = next_offset + ${n}, head_hash = ${last}
          where partition = ${partition} and (${!chained} or head_hash is not distinct from ${expected})
          returning next_offset - ${n} as first
        ), written as (
          insert into ${events} (partition, "offset", key, seq, first_seq, type, payload, at, command_id, actor, prev_hash, hash)
          select ${partition}, head.first + t.ord - 1, t.key, t.seq, t.first_seq, t.type, t.payload::jsonb, t.at, t.command_id, t.actor,
            case when t.hash is null then null else coalesce(lag(t.hash) over (order by t.ord), ${expected ?? GENESIS}::text) end, t.hash
          from head, unnest(
            ${records.map((r) => r.key)}::text[], ${records.map((r) => r.seq)}::int[], ${records.map((r) => r.firstSeq)}::int[],
            ${records.map((r) => r.type)}::text[], ${payloads}::text[],
            ${records.map((r) => r.at)}::text[], ${records.map((r) => r.commandId)}::text[],
            ${records.map((r) => r.actor)}::text[], ${hashes as string[]}::text[]
          ) with ordinality as t(key, seq, first_seq, type, payload, at, command_id, actor, hash, ord)
        )
        select first from head`
      if (head !== undefined) {
        if (last !== null) {
          chainHeads.set(partition, last)
          appendedHeads.set(partition, { offset: Number(head.first) + n - 1, hash: last })
        }
        return head.first as number
      }
      // another appender moved the head: chain onto where it is now
      chainHeads.delete(partition)
    }
  }

  return { write, appendedHeads }
}

/**
 * The appender: group commit per partition over the chained writer; wakes this log's subscribers
 * once a group has committed.
 */
const makeAppender = (
  tables: Tables,
  partitions: number,
  chained: boolean,
  appended: EventEmitter
) =>
  Effect.gen(function* () {
    const { write, appendedHeads } = makeChainWriter(tables, chained)

    /**
     * One statement for the group. A statement the server refused was rolled back whole: one bad
     * append must not fail the others, so each goes again alone (any other failure leaves the
     * outcome unknown: reported to all).
     */
    const commit = (partition: number) => (group: ReadonlyArray<ReadonlyArray<EventRecord>>): Promise<ReadonlyArray<Appended>> =>
      write(partition, group.flat()).then(
        (first) => {
          appended.emit(tables.channel, partition)
          return group.map((records) => {
            const offsets = records.map((_, i) => first + i)
            first += records.length
            return { offsets }
          })
        },
        async (error): Promise<ReadonlyArray<Appended>> => {
          if (group.length === 1 || !(error instanceof postgres.PostgresError)) return group.map(() => ({ error }))
          const results: Array<Appended> = []
          for (const one of group) results.push(...(await commit(partition)([one])))
          return results
        }
      )

    // group commit per partition: partitions commit in parallel, appends to one partition together
    const committers = yield* Effect.forEach(allPartitions(partitions), (partition) =>
      GroupCommit.make({
        maxItems: MAX_APPENDS_PER_COMMIT,
        fits: (taken, next) => taken.reduce((n, records) => n + records.length, 0) + next.length <= MAX_EVENTS_PER_COMMIT,
        commit: (group: ReadonlyArray<ReadonlyArray<EventRecord>>) => Effect.promise(() => commit(partition)(group))
      })
    )

    const appendTo = (partition: number, records: ReadonlyArray<EventRecord>) =>
      records.length === 0
        ? Effect.succeed([])
        : Effect.flatMap(committers[partition].submit(records), (result) =>
            "offsets" in result ? Effect.succeed(result.offsets) : Effect.fail(fail("append")(result.error))
          )

    return { appendTo, appendedHeads }
  })

/** A subscription's place in the tail: where it has got per partition, what it has yet to read. */
interface Follower {
  readonly cursor: Map<number, number>
  /** Partitions with news to read; an append heard or a poll marks them. */
  readonly dirty: Set<number>
  /** Set while the subscription waits for news; called with the poll's failure, if it failed. */
  wake: ((failure?: unknown) => void) | undefined
}

/**
 * The tail: this log's one reader in the process, which every subscription follows (on a node,
 * the projection, the automations reactor and the log signals). Each subscription keeps its own
 * position and reads its partitions in turns, a chunk at a time; a read of a partition from an
 * offset is shared by every subscription that asks for it while it is current. A partition's
 * reads stop being current when an append to it is heard or a poll finds its head moved, so a
 * subscription never takes a read made before the news it was woken by. Subscriptions at the
 * log's end, the common case, share each read; one that lags or starts elsewhere reads for itself
 * until it catches up.
 *
 * Woken by this log's appends; appends made elsewhere are found by one poll every `pollMs` while
 * a subscription waits, which asks the heads of every partition followed in one statement.
 */
const makeTail = (
  { sql, events, heads, channel }: Tables,
  appended: EventEmitter,
  pollMs: number,
  batchSize: number
) =>
  Effect.gen(function* () {
    const readRows = (partition: number, from: number): Promise<ReadonlyArray<LoggedEvent>> =>
      sql<EventRow[]>`
        select partition, "offset", key, seq, first_seq, type, payload, at, command_id, actor, prev_hash, hash
        from ${events} where partition = ${partition} and "offset" >= ${from}
        order by "offset" limit ${batchSize}`.then((rows) => rows.map(toLogged))

    /** The current reads of each partition in flight, by first offset. */
    const reads = new Map<number, Map<number, Promise<ReadonlyArray<LoggedEvent>>>>()
    const read = (partition: number, from: number) => {
      let current = reads.get(partition)
      if (current === undefined) reads.set(partition, (current = new Map()))
      const shared = current.get(from)
      if (shared !== undefined) return shared
      const reading = readRows(partition, from)
      const done = current
      done.set(from, reading)
      // shared while in flight: the subscriptions one append wakes ask for it together
      const drop = () => void (done.get(from) === reading && done.delete(from))
      reading.then(drop, drop)
      return reading
    }

    const followers = new Set<Follower>()
    /** Marks the partition to read for whoever follows it (and is behind `next`, when a poll tells it). */
    const news = (partition: number, next?: number) => {
      for (const follower of followers) {
        const at = follower.cursor.get(partition)
        if (at === undefined || (next !== undefined && next <= at)) continue
        follower.dirty.add(partition)
        follower.wake?.()
      }
    }
    const onAppend = (partition: number) => {
      reads.delete(partition)
      news(partition)
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => appended.on(channel, onAppend)),
      () => Effect.sync(() => appended.off(channel, onAppend))
    )

    /** The heads as the last poll found them: a poll tells only a head that moved since. */
    const polledHeads = new Map<number, number>()
    let polling: ReturnType<typeof setTimeout> | undefined
    const waiting = () => [...followers].filter((follower) => follower.wake !== undefined)
    const poll = async () => {
      const followed = [...new Set(waiting().flatMap((follower) => [...follower.cursor.keys()]))]
      polling = undefined
      if (followed.length === 0) return
      try {
        const moved = await sql<Array<{ partition: number; next_offset: number }>>`
          select partition, next_offset from ${heads} where partition = any(${followed}::int[])`
        for (const { partition, next_offset } of moved) {
          // a read made before the head moved may stop short of it
          if (polledHeads.get(partition) !== next_offset) reads.delete(partition)
          polledHeads.set(partition, next_offset)
          news(partition, next_offset)
        }
      } catch (failure) {
        for (const follower of waiting()) follower.wake!(failure)
      }
      if (waiting().length > 0) polling ??= setTimeout(poll, pollMs)
    }
    yield* Effect.addFinalizer(() => Effect.sync(() => clearTimeout(polling)))

    /** Waits for news of the follower's partitions; the poll runs while anyone waits. */
    const quiet = (follower: Follower) =>
      new Promise<void>((resolve, reject) => {
        follower.wake = (failure) => {
          follower.wake = undefined
          if (failure === undefined) resolve()
          else reject(failure)
        }
        polling ??= setTimeout(poll, pollMs)
      })

    const subscribe: EventLogService["subscribe"] = (from) =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
          const follower: Follower = { cursor: new Map(from), dirty: new Set(from.keys()), wake: undefined }
          const order = [...follower.cursor.keys()]
          let next = 0
          yield* Effect.acquireRelease(
            Effect.sync(() => followers.add(follower)),
            () => Effect.sync(() => followers.delete(follower))
          )
          const nextChunk = async (): Promise<LogChunk> => {
            const { cursor, dirty } = follower
            for (;;) {
              for (let i = 0; i < order.length; i++) {
                const partition = order[(next + i) % order.length]
                if (!dirty.has(partition)) continue
                // cleared before reading, so an append that lands during the read is not missed
                dirty.delete(partition)
                const rows = await read(partition, cursor.get(partition)!)
                if (rows.length === batchSize) dirty.add(partition)
                if (rows.length === 0) continue
                next = (next + i + 1) % order.length
                const after = rows[rows.length - 1].offset + 1
                cursor.set(partition, after)
                return { partition, events: rows, next: after }
              }
              // news that came during a read of another partition is read before waiting
              if (dirty.size === 0) await quiet(follower)
            }
          }
          return Stream.repeatEffect(Effect.tryPromise({ try: nextChunk, catch: fail("subscribe") }))
        })
      )
    return subscribe
  })

export const make = (
  sql: postgres.Sql,
  options: EmbeddedLogOptions,
  appended: EventEmitter = makeAppends(),
  /** The pool the tail reads on (the projection's); `sql` unless given. */
  tailSql: postgres.Sql = sql
): Effect.Effect<EventLogService, LogError, Scope.Scope> =>
  Effect.gen(function* () {
    const { logSchema, partitions } = options
    const pollMs = options.pollMs ?? 250
    const chained = options.chained ?? true
    const batchSize = options.batchSize ?? 2000
    const tables = tablesOf(sql, logSchema)

    yield* createTables(tables, partitions)
    const { appendTo, appendedHeads } = yield* makeAppender(tables, partitions, chained, appended)

    const append: EventLogService["append"] = (partitionKey, records) =>
      appendTo(partitionFor(partitionKey, partitions), records)

    const openWriter: EventLogService["openWriter"] = (partition) =>
      Effect.succeed({
        partition,
        head: () => appendedHeads.get(partition),
        append: (records) =>
          appendTo(partition, records).pipe(
            Effect.catchIf(
              (error) => error.cause instanceof postgres.PostgresError && error.cause.code === UNIQUE_VIOLATION,
              (error) => Effect.fail(new LogFenced({ partition, message: `a key's next seq was written first: ${error.message}` }))
            )
          )
      })

    const subscribe = yield* makeTail(tailSql === sql ? tables : tablesOf(tailSql, logSchema), appended, pollMs, batchSize)

    const endOffsets: EventLogService["endOffsets"] = (wanted) =>
      Effect.tryPromise({
        try: async () => {
          const rows = await sql`select partition, next_offset from ${tables.heads} where partition = any(${wanted as number[]}::int[])`
          return new Map(rows.map((r) => [r.partition as number, r.next_offset as number]))
        },
        catch: fail("endOffsets")
      })

    return { mode: "embedded", partitions, append, openWriter, subscribe, endOffsets } satisfies EventLogService
  })

const toLogged = (row: EventRow): LoggedEvent => ({
  partition: row.partition,
  offset: row.offset,
  key: row.key,
  seq: row.seq,
  firstSeq: row.first_seq,
  type: row.type,
  payload: row.payload,
  at: row.at,
  commandId: row.command_id,
  actor: row.actor,
  prev: row.prev_hash,
  hash: row.hash
})

export const layer = (options: EmbeddedLogOptions): Layer.Layer<EventLog, LogError, Db> =>
  Layer.scoped(
    EventLog,
    Effect.flatMap(Effect.all([Db, Appends]), ([db, appends]) => make(db.sql, options, appends, db.projection.sql))
  ).pipe(Layer.provide(appendsLayer))
