/**
 * Postgres through postgres.js: the pool, transactions and the migrator for the read models.
 * One service for real Postgres and for embedded PGlite (served over its socket server).
 */
import { Context, Data, Effect, Layer } from "effect"
import { readdir, readFile } from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import postgres from "postgres"
import { reconnectDelaySeconds } from "./Backoff.ts"
import { awaitFence } from "./ReadFence.ts"

export class DbError extends Data.TaggedError("DbError")<{
  readonly message: string
  readonly cause?: unknown
  /** Set when the read models did not catch up with the writes a read must see in time. */
  readonly reason?: "read_model_behind"
}> {}

export interface DbService {
  readonly sql: postgres.Sql
  /** Statements this pool has sent since it opened, when counted (`DbOptions.countStatements`). */
  readonly statements: (() => number) | undefined
  /**
   * The pool the projection runs on (the log's tail and the batches it folds): a pool of its own
   * where the database takes more than one connection, so a batch never queues a request's
   * statement behind it and each pool's statements are counted apart; this pool otherwise.
   */
  readonly projection: DbService
  /** The read-model schema. Queries name it explicitly (`table`): PGlite's socket server ignores
   * a search_path sent at connection start, and a replay writes into another schema. */
  readonly schema: string
  /** `schema.name` as an escaped identifier, for use inside `sql` templates. */
  readonly table: (name: string) => postgres.Helper<string>
}

export class Db extends Context.Tag("svc/Db")<Db, DbService>() {}

export interface DbOptions {
  readonly url: string
  readonly schema: string
  /** Pool size; embedded PGlite has one backend, so it gets one connection. */
  readonly max?: number
  /** The projection's own pool size; 0 (embedded PGlite) shares the pool above. */
  readonly projectionMax?: number
  /**
   * Count each pool's statements. postgres.js hears them through its `debug` hook, and with the
   * hook set it records a stack trace for every statement it makes: a cost, so counting is asked for.
   */
  readonly countStatements?: boolean
  /** The node's id: its connections are `svc <node>` in `pg_stat_activity`, so an operator sees whose they are. */
  readonly node?: string
}

export const migrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../migrations")

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** Schema names go into SQL as identifiers (the migrator's `create schema`), so only plain ones pass. */
const checkSchemaName = (schema: string) => {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name '${schema}'`)
}

/** A pool; `onStatement` hears every statement it sends (postgres.js calls it as the statement goes out). */
export const connect = (options: DbOptions, onStatement?: (text: string) => void): postgres.Sql => {
  checkSchemaName(options.schema)
  return postgres(options.url, {
    max: options.max ?? 10,
    ...(onStatement === undefined ? {} : { debug: (_connection: number, text: string) => onStatement(text) }),
    onnotice: () => {},
    connection: { application_name: options.node === undefined ? "svc" : `svc ${options.node}` },
    backoff: reconnectDelaySeconds,
    // offsets and counts are bigint in SQL; they stay far below 2^53, so numbers serve
    types: {
      bigint: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) }
    }
  })
}

/** Applies `migrations/NNNN_name.sql` files not yet applied to the schema, in order. */
export const migrate = (sql: postgres.Sql, schema: string) =>
  Effect.tryPromise({
    try: async () => {
      const files = (await readdir(migrationsDir)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort()
      await sql.begin(async (tx) => {
        // two processes starting together must not both migrate
        await tx`select pg_advisory_xact_lock(hashtext(${`svc-migrate:${schema}`}))`
        // under the lock: two nodes creating one schema at once would collide even with `if not exists`
        await tx.unsafe(`create schema if not exists ${schema}`)
        await tx.unsafe(`create table if not exists ${schema}.schema_migrations (name text primary key)`)
        const applied = new Set(
          (await tx.unsafe(`select name from ${schema}.schema_migrations`)).map((r) => r.name as string)
        )
        for (const file of files) {
          if (applied.has(file)) continue
          await tx.unsafe(`set local search_path to ${schema}`)
          await tx.unsafe(await readFile(path.join(migrationsDir, file), "utf8"))
          await tx.unsafe(`insert into ${schema}.schema_migrations (name) values ($1)`, [file])
        }
      })
    },
    catch: (cause) => new DbError({ message: `migration of schema ${schema} failed: ${String(cause)}`, cause })
  })

/** A pool as a service; `projection`: the projection's pool, this one unless given. */
export const service = (sql: postgres.Sql, schema: string, statements?: () => number, projection?: DbService): DbService => {
  checkSchemaName(schema)
  const db: DbService = {
    sql,
    schema,
    table: (name) => sql(`${schema}.${name}`),
    statements,
    get projection() {
      return projection ?? db
    }
  }
  return db
}

let statementTap: ((text: string) => void) | undefined

/** Hears the text of every statement the node's counted pools send from now on, until called with undefined (the work bench's breakdown). */
export const tapStatements = (tap: ((text: string) => void) | undefined) => {
  statementTap = tap
}

/** A pool, counting its statements if asked to, closed with the scope. */
const counted = (options: DbOptions) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => {
        if (options.countStatements !== true) return { sql: connect(options), statements: undefined }
        let sent = 0
        const sql = connect(options, (text) => {
          sent++
          statementTap?.(text)
        })
        return { sql, statements: () => sent }
      }),
      ({ sql }) => Effect.promise(() => sql.end({ timeout: 5 }))
    ),
    ({ sql, statements }) => service(sql, options.schema, statements)
  )

/** The pools (requests', and the projection's where it has its own) plus the migrated schema, closed with the scope. */
export const layer = (options: DbOptions): Layer.Layer<Db, DbError> =>
  Layer.scoped(
    Db,
    Effect.gen(function* () {
      const requests = yield* counted(options)
      yield* migrate(requests.sql, options.schema)
      const projectionMax = options.projectionMax ?? 0
      if (projectionMax === 0) return requests
      const projection = yield* counted({ ...options, max: projectionMax })
      return service(requests.sql, options.schema, requests.statements, projection)
    })
  )

/**
 * Runs a read-model query, turning a driver failure into a DbError. Inside an invocation it first
 * waits until the read models hold the writes the invocation must see (`ReadFence.ts`).
 */
export const query = <A>(what: string, run: () => Promise<A>): Effect.Effect<A, DbError> =>
  Effect.zipRight(
    fenced,
    Effect.tryPromise({ try: run, catch: (cause) => new DbError({ message: `${what}: ${String(cause)}`, cause }) })
  )

/** The first row a query finds, as `toValue` makes it; undefined when it finds none. */
export const queryFirst = <R, A>(what: string, run: () => Promise<ReadonlyArray<R>>, toValue: (row: R) => A): Effect.Effect<A | undefined, DbError> =>
  Effect.map(query(what, run), (rows) => (rows.length === 0 ? undefined : toValue(rows[0]!)))

const fenced = Effect.flatMap(awaitFence, (caughtUp) =>
  caughtUp
    ? Effect.void
    : Effect.fail(new DbError({ reason: "read_model_behind", message: "the read models have not caught up with the writes this read must see; retry" }))
)
