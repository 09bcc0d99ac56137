/**
 * The projection runner: folds a partition of the log into the read models. Each batch commits
 * its rows, the actor states and the partition's checkpoint in one transaction, so the read
 * models are exactly-once whatever crashes; the checkpoint row is locked for the batch, so a stale
 * runner racing the new owner applies nothing twice.
 */
import { Chunk, Effect, Schema, Stream } from "effect"
import { createHash } from "node:crypto"
import type postgres from "postgres"
import {
  type AnyActorKind,
  decodeEvent,
  type Json,
  type KindRegistry,
  kindOfKey,
  type RowOp
} from "../actors/kernel.ts"
import { type DbError, type DbService, query } from "./Db.ts"
import { EventLog, type LogChunk, type LoggedEvent, type LogError } from "./EventLog.ts"
import { dependencyRetry } from "./Backoff.ts"

/** How many command ids each key remembers, for idempotent retries. */
export const RECENT_COMMANDS = 32

export interface StoredActor {
  readonly seq: number
  readonly state: unknown
  readonly recentCommands: ReadonlyArray<string>
}

export const rememberCommand = (recent: ReadonlyArray<string>, commandId: string): ReadonlyArray<string> =>
  recent[recent.length - 1] === commandId ? recent : [...recent, commandId].slice(-RECENT_COMMANDS)

interface Folded extends StoredActor {
  readonly kind: AnyActorKind
  readonly at: string
}

export interface Applied {
  /** The next offset of every partition in the batch. */
  readonly next: ReadonlyMap<number, number>
  /** Offsets this batch applied, per partition (not those it skipped or found applied already). */
  readonly applied: ReadonlyMap<number, ReadonlySet<number>>
}

/** A key's state as a runner last committed it: decoded, with its seq and recent commands. */
interface Remembered {
  readonly seq: number
  readonly state: unknown
  readonly recentCommands: ReadonlyArray<string>
}

/**
 * The states a projection runner folded and committed, by partition, with the checkpoint each
 * partition's last commit left: while a partition's checkpoint is still that one, nobody else has
 * projected it since, so its states are the ones `actor_state` holds, and the next batch need not
 * read (nor decode) them again. A checkpoint found elsewhere forgets the partition's states; a
 * failed batch forgets them all. At most `perPartition` keys a partition, the least recently
 * folded forgotten first.
 */
export class ProjectedStates {
  readonly #partitions = new Map<number, { next: number; readonly states: Map<string, Remembered> }>()
  constructor(private readonly perPartition = 10_000) {}

  /** The partition's states, if its checkpoint is `next`, where this runner's last commit left it. */
  current(partition: number, next: number): ReadonlyMap<string, Remembered> | undefined {
    const remembered = this.#partitions.get(partition)
    if (remembered === undefined) return undefined
    if (remembered.next === next) return remembered.states
    this.#partitions.delete(partition)
    return undefined
  }

  remember(partition: number, next: number, folded: ReadonlyArray<readonly [string, Remembered]>) {
    let remembered = this.#partitions.get(partition)
    if (remembered === undefined) this.#partitions.set(partition, (remembered = { next, states: new Map() }))
    remembered.next = next
    for (const [key, state] of folded) {
      remembered.states.delete(key)
      remembered.states.set(key, state)
    }
    for (const key of remembered.states.keys()) {
      if (remembered.states.size <= this.perPartition) break
      remembered.states.delete(key)
    }
  }

  forget() {
    this.#partitions.clear()
  }
}

/**
 * Applies chunks of the log to the read models in one transaction; each partition's chunks must be
 * in offset order. A partition's checkpoint moves to its last chunk's `next`, past what the log
 * holds that is no event (Kafka's transaction markers), so that it reaches the log's end offset.
 *
 * An event applies when its seq is its key's last seq + 1, and a command applies all or nothing:
 * when two writers raced for a key (a stale owner and the new one), the first command in the log
 * wins, and every event of the other is rejected, by every reader and every replay alike.
 */
export const applyBatch = (
  live: DbService,
  kinds: KindRegistry,
  chunks: ReadonlyArray<LogChunk>,
  /** The caller's cache of column types; a fresh one reads them again. */
  columnTypes: ColumnTypes = makeColumnTypes(),
  /** Whether to announce the moved checkpoints to waiters on other nodes (a cluster on Kafka);
   * with the embedded log one node projects every partition, and nobody listens. */
  announce = false,
  /** The runner's states of its previous batches; none: every state is read. */
  remembered?: ProjectedStates
): Promise<Applied> => {
  const db: Target = { ...live, columnTypes }
  /** What this batch folded, by partition, to remember once committed. */
  const committing = new Map<number, { next: number; folded: Array<readonly [string, Remembered]> }>()
  const applying = db.sql.begin(async (tx) => {
    const checkpoints = db.table("projection_checkpoints")
    const reached = new Map<number, number>()
    for (const { partition, next } of chunks) reached.set(partition, Math.max(reached.get(partition) ?? 0, next))
    const partitions = [...reached.keys()].sort((a, b) => a - b)
    // one statement makes sure each partition has its checkpoint row, locks the rows in partition
    // order (so two runners never deadlock; a stale runner waits, then finds the checkpoint moved
    // and skips), and reads them: the upsert's no-op update takes the row lock, and returns the
    // row as committed. It also turns off the fsync wait for this transaction: the log is the
    // source of truth, so a crash may lose the last commits' durability (they are re-projected
    // from the checkpoint), never their atomicity.
    const locked = await tx`insert into ${checkpoints} as c (partition, next_offset)
      select p, 0 from unnest(${partitions}::int[]) as p order by p
      on conflict (partition) do update set next_offset = c.next_offset
      returning c.partition, c.next_offset, set_config('synchronous_commit', 'off', true)`
    const next = new Map<number, number>(locked.map((r) => [r.partition as number, r.next_offset as number]))
    const applied = new Map<number, Set<number>>(partitions.map((p) => [p, new Set()]))
    const moved = partitions.filter((p) => reached.get(p)! > next.get(p)!)
    if (moved.length === 0) return { next, applied }
    const events = chunks.flatMap((chunk) => chunk.events).filter((e) => e.offset >= next.get(e.partition)!)

    const statefulKeys = new Map<string, number>()
    for (const e of events) if (!kinds.get(kindOfKey(e.key))?.stateless) statefulKeys.set(e.key, e.partition)
    const actors = new Map<string, StoredActor>()
    const decoded = new Map<string, unknown>()
    const current = new Map(moved.map((p) => [p, remembered?.current(p, next.get(p)!)]))
    const unknown: Array<string> = []
    for (const [key, partition] of statefulKeys) {
      const known = current.get(partition)?.get(key)
      if (known === undefined) {
        unknown.push(key)
        continue
      }
      actors.set(key, known)
      decoded.set(key, known.state)
    }
    const stored = unknown.length === 0 ? [] : await tx`
      select key, seq, state, recent_commands from ${db.table("actor_state")} where key = any(${unknown}::text[])`
    for (const r of stored) actors.set(r.key as string, { seq: r.seq, state: r.state, recentCommands: r.recent_commands })
    const folded = new Map<string, Folded>()
    const ops = new RowOps()

    for (const record of events) {
      const kind = kinds.get(kindOfKey(record.key))
      // events of kinds this version does not know stay in the log for the version that does
      if (kind === undefined) continue
      const event = decodeEvent(kind, record.type, record.payload)
      const ctx = { key: record.key, seq: record.seq, at: record.at, actor: record.actor, commandId: record.commandId }
      if (kind.stateless) {
        ops.add(kind.project(kind.initialState, event, ctx))
        applied.get(record.partition)!.add(record.offset)
        continue
      }
      const current = folded.get(record.key) ?? actors.get(record.key)
      if (!follows(current, record)) continue
      applied.get(record.partition)!.add(record.offset)
      const before = folded.has(record.key)
        ? current!.state
        : current === undefined
          ? kind.initialState
          : decodedState(decoded, kind, record.key, current.state)
      const after = kind.evolve(before, event)
      ops.add(kind.project(after, event, ctx))
      folded.set(record.key, {
        kind,
        seq: record.seq,
        state: after,
        at: record.at,
        recentCommands: rememberCommand(current?.recentCommands ?? [], record.commandId)
      })
    }

    const stateRows = [...folded].map(([key, f]) => ({
      key,
      kind: f.kind.kind,
      seq: f.seq,
      state: Schema.encodeSync(f.kind.state)(f.state) as Json,
      recent_commands: f.recentCommands as Json,
      updated_at: f.at
    }))
    await insertRows(tx, db, "actor_state", ["key"], stateRows, "update")
    await ops.flush(tx, db)
    for (const p of moved) next.set(p, reached.get(p)!)
    for (const p of moved) committing.set(p, { next: reached.get(p)!, folded: [] })
    for (const [key, f] of folded) committing.get(statefulKeys.get(key)!)?.folded.push([key, { seq: f.seq, state: f.state, recentCommands: f.recentCommands }])
    const offsets = moved.map((p) => next.get(p)!)
    // announced to whoever waits on another node (`host/RemoteProjections.ts`); delivered at commit
    if (announce) {
      await tx`with moved as (
          update ${checkpoints} c set next_offset = n.next_offset
          from unnest(${moved}::int[], ${offsets}::bigint[]) as n(partition, next_offset)
          where c.partition = n.partition
          returning c.partition, c.next_offset)
        select pg_notify(${projectionChannel(db.schema)}, string_agg(partition || ':' || next_offset, ',')) from moved`
    } else {
      await tx`update ${checkpoints} c set next_offset = n.next_offset
        from unnest(${moved}::int[], ${offsets}::bigint[]) as n(partition, next_offset)
        where c.partition = n.partition`
    }
    return { next, applied }
  }) as Promise<Applied>
  if (remembered === undefined) return applying
  return applying.then(
    (result) => {
      for (const [partition, { next, folded }] of committing) remembered.remember(partition, next, folded)
      return result
    },
    (error) => {
      remembered.forget()
      throw error
    }
  )
}

/**
 * The channel every commit of projection checkpoints is announced on, in the transaction that
 * moves them (so it is heard once committed): `partition:next` pairs, comma separated. A channel
 * name is at most 63 bytes; a long schema name is hashed.
 */
export const projectionChannel = (schema: string): string => {
  const channel = `svc_projected_${schema}`
  return channel.length <= 63 ? channel : `svc_projected_${createHash("sha256").update(schema).digest("hex").slice(0, 40)}`
}

/** A `projectionChannel` payload read back: the next offset of each partition named. */
export const parseProjected = (payload: string): ReadonlyMap<number, number> => {
  const next = new Map<number, number>()
  for (const pair of payload.split(",")) {
    const [partition, offset] = pair.split(":").map(Number)
    if (Number.isSafeInteger(partition) && Number.isSafeInteger(offset)) next.set(partition, offset)
  }
  return next
}

/**
 * Whether an event applies on top of its key's last applied event: its seq must come next, and it
 * must open its command or continue the command whose event was applied last. A duplicate, or a
 * stale owner's late write (the whole command, not just its first event), is rejected the same
 * way by every reader and every replay.
 */
export const follows = (last: StoredActor | undefined, record: LoggedEvent): boolean => {
  const seq = last?.seq ?? 0
  if (record.seq !== seq + 1) return false
  if (record.seq === record.firstSeq) return true
  return last !== undefined && last.recentCommands[last.recentCommands.length - 1] === record.commandId && seq >= record.firstSeq
}

const decodedState = (cache: Map<string, unknown>, kind: AnyActorKind, key: string, stored: unknown) => {
  if (!cache.has(key)) cache.set(key, decodeState(kind, stored))
  return cache.get(key)
}

export const decodeState = (kind: AnyActorKind, stored: unknown): unknown => Schema.decodeUnknownSync(kind.state)(stored)


/** Rows to write, coalesced by table and primary key (the last operation on a row wins). */
class RowOps {
  private readonly tables = new Map<string, { pk: ReadonlyArray<string>; rows: Map<string, RowOp> }>()

  add(ops: ReadonlyArray<RowOp>) {
    for (const op of ops) {
      let table = this.tables.get(op.table)
      if (table === undefined) {
        table = { pk: op.pk, rows: new Map() }
        this.tables.set(op.table, table)
      }
      const id = JSON.stringify(op.pk.map((c) => op.row[c]))
      // an insert-only row keeps its first version, as `on conflict do nothing` would
      if (op.op === "insert" && table.rows.has(id)) continue
      table.rows.set(id, op)
    }
  }

  async flush(tx: postgres.TransactionSql, db: Target) {
    for (const [name, { pk, rows }] of this.tables) {
      const all = [...rows.values()]
      const rowsOf = (kind: RowOp["op"]) => all.filter((o) => o.op === kind).map((o) => o.row)
      await insertRows(tx, db, name, pk, rowsOf("upsert"), "update")
      await insertRows(tx, db, name, pk, rowsOf("insert"), "nothing")
      await deleteRows(tx, db, name, pk, rowsOf("delete"))
    }
  }
}

/** Writes `ops` in `tx` into `db`'s schema, as a batch of the projection writes them. */
export const writeRowOps = (tx: postgres.TransactionSql, db: DbService, ops: ReadonlyArray<RowOp>) => {
  const rows = new RowOps()
  rows.add(ops)
  return rows.flush(tx, { ...db, columnTypes: makeColumnTypes() })
}

type Row = Readonly<Record<string, Json>>

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`
const qualified = (db: DbService, table: string) => `${ident(db.schema)}.${ident(table)}`

/** A column's values travel as one text array; the statement casts them to the column's type. */
const asText = (value: Json | undefined): string | null =>
  value === undefined || value === null ? null : typeof value === "object" ? JSON.stringify(value) : String(value)

/**
 * Column types of each read-model table, read once by whoever holds the cache: a projector for as
 * long as it runs, a replay or catch-up for its own length.
 */
export type ColumnTypes = Map<string, Promise<ReadonlyMap<string, string>>>

export const makeColumnTypes = (): ColumnTypes => new Map()

/** The read models a batch writes, with the column types read of them so far. */
interface Target extends DbService {
  readonly columnTypes: ColumnTypes
}

const typesOf = (tx: postgres.TransactionSql, db: Target, table: string) => {
  const { columnTypes } = db
  const id = `${db.schema}.${table}`
  let types = columnTypes.get(id)
  if (types === undefined) {
    types = Promise.resolve(
      tx`select column_name, udt_name from information_schema.columns where table_schema = ${db.schema} and table_name = ${table}`
    ).then((rows) => new Map(rows.map((r) => [r.column_name as string, r.udt_name as string])))
    columnTypes.set(id, types)
    types.catch(() => columnTypes.delete(id))
  }
  return types
}

/** `unnest($1::text[], ...) as t(a, b)` with the values cast back to the columns' types. */
const unnested = async (tx: postgres.TransactionSql, db: Target, table: string, columns: ReadonlyArray<string>, rows: ReadonlyArray<Row>) => {
  const types = await typesOf(tx, db, table)
  const casts = columns.map((c) => {
    const type = types.get(c)
    if (type === undefined) throw new Error(`${table} has no column ${c}`)
    return `t.${ident(c)}::${ident(type)}`
  })
  return {
    from: `unnest(${columns.map((_, i) => `$${i + 1}::text[]`).join(", ")}) as t(${columns.map(ident).join(", ")})`,
    casts,
    params: columns.map((c) => rows.map((row) => asText(row[c])))
  }
}

const deleteRows = async (tx: postgres.TransactionSql, db: Target, table: string, pk: ReadonlyArray<string>, rows: ReadonlyArray<Row>) => {
  if (rows.length === 0) return
  const { from, casts, params } = await unnested(tx, db, table, pk, rows)
  await tx.unsafe(
    `delete from ${qualified(db, table)} where (${pk.map(ident).join(", ")}) in (select ${casts.join(", ")} from ${from})`,
    params as never
  )
}

const insertRows = async (
  tx: postgres.TransactionSql,
  db: Target,
  table: string,
  pk: ReadonlyArray<string>,
  rows: ReadonlyArray<Row>,
  onConflict: "update" | "nothing"
) => {
  if (rows.length === 0) return
  const columns = Object.keys(rows[0])
  const rest = columns.filter((c) => !pk.includes(c))
  const conflict =
    onConflict === "nothing" || rest.length === 0
      ? "do nothing"
      : `do update set ${rest.map((c) => `${ident(c)} = excluded.${ident(c)}`).join(", ")}`
  const { from, casts, params } = await unnested(tx, db, table, columns, rows)
  await tx.unsafe(
    `insert into ${qualified(db, table)} (${columns.map(ident).join(", ")}) select ${casts.join(", ")} from ${from}
     on conflict (${pk.map(ident).join(", ")}) ${conflict}`,
    params as never
  )
}

export const readCheckpoints = (db: DbService, partitions: ReadonlyArray<number>) =>
  query("read checkpoints", async () => {
    const rows = await db.sql`
      select partition, next_offset from ${db.table("projection_checkpoints")}
      where partition = any(${partitions as number[]}::int[])`
    const found = new Map(rows.map((r) => [r.partition as number, r.next_offset as number]))
    return new Map(partitions.map((p) => [p, found.get(p) ?? 0]))
  })

/** Chunks that arrive together (several partitions, or one partition's run) go in one transaction. */
export const coalesce = <E, R>(chunks: Stream.Stream<LogChunk, E, R>) =>
  chunks.pipe(
    Stream.groupedWithin(64, "2 millis"),
    Stream.map(Chunk.toReadonlyArray)
  )

export const eventsIn = (chunks: ReadonlyArray<LogChunk>): number => chunks.reduce((n, chunk) => n + chunk.events.length, 0)

/**
 * Tails the log from the partitions' checkpoints and applies every chunk, calling `onApplied`
 * with the next offset after each commit. Runs until interrupted; a failed batch is retried.
 */
export const project = (
  db: DbService,
  kinds: KindRegistry,
  partitions: ReadonlyArray<number>,
  /** After each commit; `applied` is undefined for the starting position (nothing applied yet). */
  onApplied: (partition: number, next: number, applied: ReadonlySet<number> | undefined) => void,
  /** After each failure, before the retry: whoever waits on the projection need not wait blind. */
  onFailed: (error: DbError | LogError) => void = () => {}
) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const from = yield* readCheckpoints(db, partitions)
    for (const [p, next] of from) onApplied(p, next, undefined)
    const columnTypes = makeColumnTypes()
    const remembered = new ProjectedStates()
    yield* log.subscribe(from).pipe(
      coalesce,
      Stream.runForEach((batch) =>
        query("apply batch", () => applyBatch(db, kinds, batch, columnTypes, log.mode === "kafka", remembered)).pipe(
          Effect.withSpan("Projector.applyBatch", { attributes: { events: eventsIn(batch) } }),
          Effect.tap(({ next, applied }) => next.forEach((offset, partition) => onApplied(partition, offset, applied.get(partition)!)))
        )
      )
    )
  }).pipe(
    Effect.tapError((error) => Effect.zipRight(Effect.sync(() => onFailed(error)), Effect.logWarning(`projection of partitions ${partitions} failed; retrying`, error))),
    Effect.retry(dependencyRetry)
  )
