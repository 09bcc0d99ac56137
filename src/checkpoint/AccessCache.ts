/**
 * A short-lived, bounded, in-process cache of what the checkpoint reads on every request: a
 * credential (an API key or a session) by its lookup id, the slugs of a credential's place, the
 * place a path names, the access facts of a caller in a place, and a custom role's grants. A
 * cached caller is resolved with no Postgres round trip; a busy caller costs each query about once
 * per `ACCESS_TTL_MS`.
 *
 * Rules:
 * - An entry lives `ACCESS_TTL_MS` (1 s) from the moment its query started, so a change made on
 *   another node shows here within that time. (The decision itself is made afresh every time: a
 *   cached credential still has its secret verified, its status and expiry checked against the clock.)
 * - A miss is looked up once: every caller asking for that key while its query is in flight waits
 *   for the same query. A failed query is not kept; its waiters all see the failure.
 * - Only found things are cached: a key, place or workspace created a moment ago is seen at once.
 * - `invalidateCredential`, `invalidateOrg` and `invalidateAll` drop entries on this node at once.
 *   A query in flight at that moment still answers the callers already waiting for it, but its
 *   answer is not kept and nobody joins it afterwards. The checkpoint calls them after every
 *   mutating capability and after a refusal by the access rules; code that changes access outside
 *   a capability (sign-out) must call them itself.
 * - Each table holds at most `ACCESS_CACHE_ENTRIES` entries; the oldest goes first.
 * - Entries and invalidation marks belong to the node's `AccessCache` service, so several nodes in
 *   one process (tests) never share them.
 *
 * The access rules read what they need as `Fact`s, through `decide`: a decision over facts all
 * kept here is plain synchronous code (`decideNow`, the checkpoint's path for a cached caller);
 * a fact not at hand is looked up (`lookup`) and the decision made again with it, so both paths
 * run the same rules.
 */
import { Context, Effect, Layer } from "effect"
import { Db, type DbError, type DbService, query } from "../../streams/Db.ts"

/** How long an entry is served: the most a change made on another node can go unseen here. */
export const ACCESS_TTL_MS = 1_000

/** Entries per table per node. */
export const ACCESS_CACHE_ENTRIES = 10_000

/** What an entry belongs to, for invalidation. */
export interface Owner {
  readonly orgId: string | null
  /** The key's or session's id. */
  readonly credentialId: string | null
}

interface Kept {
  readonly kept: true
  readonly value: unknown
  /** `version` when the entry's query started. */
  readonly version: number
  /** performance.now() after which it is stale. */
  readonly expires: number
  /** performance.now() after which its next use looks it up again in the background. */
  readonly renewAfter: number
  readonly owner: Owner
  /** A renewal was started (at most one per entry). */
  renewing: boolean
}

interface InFlight {
  readonly kept: false
  readonly promise: Promise<unknown>
  readonly version: number
}

export type Table = "keys" | "sessions" | "slugs" | "places" | "facts" | "roles"

/** Something the access rules read, as this cache keeps it: `lookup`'s arguments. */
export interface Fact<A> {
  readonly table: Table
  readonly key: string
  /** Names the query in a failure. */
  readonly what: string
  readonly load: (db: DbService) => Promise<A>
  readonly ownerOf: (value: A) => Owner | undefined
}

/** The access rules' reader of facts. */
export type Facts = <A>(fact: Fact<A>) => A

/** Returned by `peek` for an entry that cannot be served as it stands (absent, stale, or due a renewal). */
export const notAtHand: unique symbol = Symbol("notAtHand")

export interface AccessCacheService {
  /**
   * The value of `load` for `key` in `table`: kept, or in flight for another caller, or loaded now
   * and kept when `ownerOf` names what it belongs to (undefined: not kept, e.g. nothing was found).
   * `what` names the query in a failure. An entry used in the second half of its life is looked up
   * again in the background, so that a busy caller never waits for its expiry.
   */
  readonly lookup: <A>(table: Table, key: string, what: string, load: () => Promise<A>, ownerOf: (value: A) => Owner | undefined) => Effect.Effect<A, DbError>
  /** What `lookup` would answer at once with no query and no renewal, else `notAtHand`. */
  readonly peek: (table: Table, key: string) => unknown
  /** Drops the cached credential with this id (a key revoked or rotated, a session ended). */
  readonly invalidateCredential: (credentialId: string) => void
  /** Drops everything cached about this organization: its keys, slugs, places, access facts and roles. */
  readonly invalidateOrg: (orgId: string) => void
  /** Drops everything. */
  readonly invalidateAll: () => void
}

export class AccessCache extends Context.Tag("svc/AccessCache")<AccessCache, AccessCacheService>() {}

interface Mark {
  readonly version: number
  readonly at: number
}

/** One node's cache: its tables and invalidation marks. */
export const make = (): AccessCacheService => {
  const tables: Record<Table, Map<string, Kept | InFlight>> = {
    keys: new Map(), sessions: new Map(), slugs: new Map(), places: new Map(), facts: new Map(), roles: new Map()
  }

  // Invalidation marks: each invalidation takes the next version; an entry whose query started
  // before a mark that covers it is stale. Marks older than the TTL cover nothing live and are pruned.
  let version = 0
  let allMark = 0
  const orgMarks = new Map<string, Mark>()
  const credentialMarks = new Map<string, Mark>()

  const mark = (marks: Map<string, Mark>, id: string) => {
    const now = performance.now()
    marks.set(id, { version: ++version, at: now })
    if (marks.size > ACCESS_CACHE_ENTRIES) {
      for (const [key, m] of marks) if (m.at + ACCESS_TTL_MS < now) marks.delete(key)
    }
  }

  const current = (started: number, owner: Owner) =>
    started >= allMark
    && (owner.orgId === null || started >= (orgMarks.get(owner.orgId)?.version ?? 0))
    && (owner.credentialId === null || started >= (credentialMarks.get(owner.credentialId)?.version ?? 0))

  const keptValue = (slot: Kept | InFlight | undefined, now: number): Kept | undefined =>
    slot !== undefined && slot.kept && now < slot.expires && current(slot.version, slot.owner) ? slot : undefined

  /** What a lookup that started at `started` (and `startVersion`) found, as an entry; undefined when it is not to be kept. */
  const entryOf = <A>(value: A, startVersion: number, started: number, ownerOf: (value: A) => Owner | undefined): Kept | undefined => {
    const owner = ownerOf(value)
    if (owner === undefined || !current(startVersion, owner)) return undefined
    return { kept: true, value, version: startVersion, expires: started + ACCESS_TTL_MS, renewAfter: started + ACCESS_TTL_MS / 2, owner, renewing: false }
  }

  const sharedLookup = <A>(slots: Map<string, Kept | InFlight>, key: string, load: () => Promise<A>, ownerOf: (value: A) => Owner | undefined) => {
    const slot = slots.get(key)
    const started = performance.now()
    const kept = keptValue(slot, started)
    if (kept !== undefined) return Promise.resolve(kept.value as A)
    // nothing was invalidated since it started: its answer is as good as a new one
    if (slot !== undefined && !slot.kept && slot.version === version) return slot.promise as Promise<A>
    const inFlight: InFlight = { kept: false, promise: load(), version }
    const ours = () => slots.get(key) === inFlight
    inFlight.promise.then(
      (value) => {
        if (!ours()) return
        const entry = entryOf(value as A, inFlight.version, started, ownerOf)
        if (entry === undefined) slots.delete(key)
        else slots.set(key, entry)
      },
      () => {
        if (ours()) slots.delete(key)
      }
    )
    slots.delete(key)
    if (slots.size >= ACCESS_CACHE_ENTRIES) slots.delete(slots.keys().next().value!)
    slots.set(key, inFlight)
    return inFlight.promise as Promise<A>
  }

  const lookup = <A>(table: Table, key: string, what: string, load: () => Promise<A>, ownerOf: (value: A) => Owner | undefined): Effect.Effect<A, DbError> =>
    Effect.suspend(() => {
      const slots = tables[table]
      const now = performance.now()
      const kept = keptValue(slots.get(key), now)
      if (kept === undefined) {
        // a miss goes through `query`, which first waits for the writes this read must see (an
        // invocation's read fence); only then is the lookup joined or started
        return query(what, () => sharedLookup(slots, key, load, ownerOf))
      }
      if (kept.renewing || now < kept.renewAfter) return Effect.succeed(kept.value as A)
      kept.renewing = true
      const startVersion = version
      const started = performance.now()
      // forked with this caller's read fence; if it fails, the entry simply expires
      const renewal = query(what, load).pipe(
        Effect.map((value) => {
          const next = entryOf(value, startVersion, started, ownerOf)
          if (next !== undefined && slots.get(key) === kept) slots.set(key, next)
        }),
        Effect.ignore
      )
      return Effect.as(Effect.forkDaemon(renewal), kept.value as A)
    })

  const peek = (table: Table, key: string) => {
    const now = performance.now()
    const kept = keptValue(tables[table].get(key), now)
    return kept !== undefined && (kept.renewing || now < kept.renewAfter) ? kept.value : notAtHand
  }

  return {
    lookup,
    peek,
    invalidateCredential: (credentialId) => mark(credentialMarks, credentialId),
    invalidateOrg: (orgId) => mark(orgMarks, orgId),
    invalidateAll: () => {
      allMark = ++version
    }
  }
}

/** Thrown by the reader of `decideNow` and `decide` at a fact not at hand: it is looked up and the decision made again. */
class Missing {
  constructor(readonly fact: Fact<unknown>, readonly id: string) {}
}

/** A reader over the cache's servable entries, and over what this decision already looked up. */
const readerOf = (cache: AccessCacheService, looked: Map<string, unknown> | undefined): Facts => (fact) => {
  const id = `${fact.table}\n${fact.key}`
  if (looked?.has(id) === true) return looked.get(id) as never
  const kept = cache.peek(fact.table, fact.key)
  if (kept === notAtHand) throw new Missing(fact as Fact<unknown>, id)
  return kept as never
}

/** `decision` over the facts the cache holds now, in plain synchronous code; `notAtHand` when one is missing. */
export const decideNow = <A>(cache: AccessCacheService, decision: (facts: Facts) => A): A | typeof notAtHand => {
  try {
    return decision(readerOf(cache, undefined))
  } catch (e) {
    if (e instanceof Missing) return notAtHand
    throw e
  }
}

/**
 * `decision` with every fact it reads: kept ones at once; each missing one looked up through the
 * cache (a query, shared with the callers asking for it too), then the decision made again, so
 * facts are read in the order the rules need them, and none the rules do not.
 */
export const decide = <A>(decision: (facts: Facts) => A): Effect.Effect<A, DbError, Db | AccessCache> =>
  Effect.flatMap(Db, (db) => Effect.flatMap(AccessCache, (cache) => {
    const looked = new Map<string, unknown>()
    const facts = readerOf(cache, looked)
    const attempt = (): Effect.Effect<A, DbError> => {
      try {
        return Effect.succeed(decision(facts))
      } catch (e) {
        if (!(e instanceof Missing)) throw e
        const { fact, id } = e
        return Effect.flatMap(cache.lookup(fact.table, fact.key, fact.what, () => fact.load(db), fact.ownerOf), (value) => {
          looked.set(id, value)
          return attempt()
        })
      }
    }
    return Effect.suspend(attempt)
  }))

/** One fact, through the cache. */
export const lookupFact = <A>(fact: Fact<A>): Effect.Effect<A, DbError, Db | AccessCache> =>
  Effect.flatMap(Db, (db) => Effect.flatMap(AccessCache, (cache) => cache.lookup(fact.table, fact.key, fact.what, () => fact.load(db), fact.ownerOf)))

/** A fresh, empty cache for the node. */
export const layer: Layer.Layer<AccessCache> = Layer.sync(AccessCache, make)
