/**
 * A short-lived, bounded, in-process cache of what the checkpoint reads on every request: an API
 * key's row by its lookup id, the slugs of a credential's place, the place a path names, and the
 * access facts of a caller in a place. Without it every request costs four queries before its
 * handler runs; with it, a busy caller costs them about once a second.
 *
 * Rules:
 * - An entry lives `ACCESS_TTL_MS` (1 s) from the moment its query started, so a change made on
 *   another node shows here within that time. (The decision itself is made afresh every time: a
 *   cached key row still has its secret verified, its status and expiry checked against the clock.)
 * - Only found things are cached: a key, place or workspace created a moment ago is seen at once.
 * - `invalidateKey`, `invalidateOrg` and `invalidateAll` drop entries on this node at once,
 *   including those whose query is in flight at that moment (they are not stored). The checkpoint
 *   calls them after every mutating capability and after a refusal by the access rules; code that
 *   changes access outside a capability must call them itself.
 * - Each table holds at most `ACCESS_CACHE_ENTRIES` entries; the oldest goes first.
 * - Entries are kept per database pool, so several nodes in one process (tests) never share them.
 */
import { Effect } from "effect"
import type { Db } from "./Db.ts"

/** How long an entry is served: the most a change made on another node can go unseen here. */
export const ACCESS_TTL_MS = 1_000

/** Entries per table per node. */
export const ACCESS_CACHE_ENTRIES = 10_000

interface Entry {
  readonly value: unknown
  /** `version` when the entry's query started. */
  readonly version: number
  /** performance.now() after which it is stale. */
  readonly expires: number
  readonly orgId: string | null
  readonly keyId: string | null
}

type Table = "keys" | "slugs" | "places" | "facts"

/** One node's tables, by its pool. */
const nodes = new WeakMap<object, Record<Table, Map<string, Entry>>>()

const tablesOf = (pool: object) => {
  let tables = nodes.get(pool)
  if (tables === undefined) {
    tables = { keys: new Map(), slugs: new Map(), places: new Map(), facts: new Map() }
    nodes.set(pool, tables)
  }
  return tables
}

// Invalidation marks: each invalidation takes the next version; an entry whose query started
// before a mark that covers it is stale. Marks older than the TTL cover nothing live and are pruned.
let version = 0
let allMark = 0
const orgMarks = new Map<string, { readonly version: number; readonly at: number }>()
const keyMarks = new Map<string, { readonly version: number; readonly at: number }>()

const mark = (marks: Map<string, { readonly version: number; readonly at: number }>, id: string) => {
  const now = performance.now()
  marks.set(id, { version: ++version, at: now })
  if (marks.size > ACCESS_CACHE_ENTRIES) {
    for (const [key, m] of marks) if (m.at + ACCESS_TTL_MS < now) marks.delete(key)
  }
}

const fresh = (entry: Entry, now: number) =>
  now < entry.expires
  && entry.version >= allMark
  && (entry.orgId === null || entry.version >= (orgMarks.get(entry.orgId)?.version ?? 0))
  && (entry.keyId === null || entry.version >= (keyMarks.get(entry.keyId)?.version ?? 0))

/** Drops the cached row of this key (revoked, rotated, acknowledged): its next use reads it again. */
export const invalidateKey = (keyId: string): void => mark(keyMarks, keyId)

/** Drops everything cached about this organization: its keys, slugs, places and access facts. */
export const invalidateOrg = (orgId: string): void => mark(orgMarks, orgId)

/** Drops everything. */
export const invalidateAll = (): void => {
  allMark = ++version
}

/**
 * `load`'s value from the cache, or `load` run and its value kept when `keep` says what it
 * belongs to (undefined: not cached, e.g. nothing was found).
 */
const cached = <A, E, R>(
  db: Db["Type"],
  table: Table,
  key: string,
  load: Effect.Effect<A, E, R>,
  keep: (value: A) => { readonly orgId: string | null; readonly keyId: string | null } | undefined
): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const entries = tablesOf(db.sql)[table]
    const now = performance.now()
    const hit = entries.get(key)
    if (hit !== undefined) {
      if (fresh(hit, now)) return Effect.succeed(hit.value as A)
      entries.delete(key)
    }
    const started = version
    return Effect.tap(load, (value) => {
      const owner = keep(value)
      if (owner === undefined) return
      const entry: Entry = { value, version: started, expires: now + ACCESS_TTL_MS, ...owner }
      // invalidated while the query ran: serve this answer once, keep nothing
      if (!fresh(entry, performance.now())) return
      if (entries.size >= ACCESS_CACHE_ENTRIES) entries.delete(entries.keys().next().value!)
      entries.set(key, entry)
    })
  })

type Rows = ReadonlyArray<Readonly<Record<string, unknown>>>

const orgOf = (rows: Rows) => (rows[0].org_id as string | null | undefined) ?? null

/** `authenticate`'s key row by lookup id: `select key_id, org_id, ... from api_keys where lookup_id = $1`. */
export const cachedKeyRows = <A extends Rows, E, R>(db: Db["Type"], lookupId: string, load: Effect.Effect<A, E, R>) =>
  cached(db, "keys", lookupId, load, (rows) =>
    rows.length === 0 ? undefined : { orgId: orgOf(rows), keyId: (rows[0].key_id as string | null | undefined) ?? null })

/** `slugsOf`'s row: the slugs of an organization and (optionally) one of its workspaces. */
export const cachedSlugRows = <A extends Rows, E, R>(db: Db["Type"], orgId: string, workspaceId: string | null, load: Effect.Effect<A, E, R>) =>
  cached(db, "slugs", `${orgId}\n${workspaceId ?? ""}`, load, (rows) => (rows.length === 0 ? undefined : { orgId, keyId: null }))

/** `findPlace`'s row: the organization and workspace a path's slugs name. */
export const cachedPlaceRows = <A extends Rows, E, R>(db: Db["Type"], orgSlug: string, workspaceSlug: string, load: Effect.Effect<A, E, R>) =>
  cached(db, "places", `${orgSlug}\n${workspaceSlug}`, load, (rows) => (rows.length === 0 ? undefined : { orgId: orgOf(rows), keyId: null }))

/** `accessFacts`'s row: an organization's security settings and a person's standing in a place. */
export const cachedAccessFactRows = <A extends Rows, E, R>(
  db: Db["Type"],
  orgId: string,
  workspaceId: string | null,
  userId: string | null,
  sessionProviderId: string | null,
  load: Effect.Effect<A, E, R>
) =>
  cached(db, "facts", `${orgId}\n${workspaceId ?? ""}\n${userId ?? ""}\n${sessionProviderId ?? ""}`, load, () => ({ orgId, keyId: null }))
