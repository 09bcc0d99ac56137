/** Events of a registry (`registry:<registryId>`); `_tag` is the published type and is never renamed. */
import { Schema } from "effect"
import { Json } from "../kernel.ts"

const target = { registryId: Schema.NonEmptyString }

export const AuthKind = Schema.Literal("oauth", "secret", "none")
export const CatalogStatus = Schema.Literal("active", "deprecated", "deleted")
export const SyncMode = Schema.Literal("full", "incremental", "server")
export type SyncMode = typeof SyncMode.Type

/** One server version as the catalog keeps it, derived from the registry's answer (spec 6.3.4). */
export const CatalogEntry = Schema.Struct({
  /** `mcat_` and a digest of (registry, name, version): the same version keeps its id across syncs. */
  serverId: Schema.NonEmptyString,
  name: Schema.NonEmptyString,
  version: Schema.NonEmptyString,
  /** As upstream flags it (false when its metadata is absent); the newest flagged one wins. */
  isLatest: Schema.Boolean,
  title: Schema.NullOr(Schema.String),
  description: Schema.String,
  repository: Schema.NullOr(Json),
  websiteUrl: Schema.NullOr(Schema.String),
  icons: Json,
  packages: Json,
  remotes: Json,
  transportTypes: Schema.Array(Schema.String),
  authKind: AuthKind,
  categories: Schema.Array(Schema.String),
  status: CatalogStatus,
  publishedAt: Schema.NullOr(Schema.String),
  upstreamUpdatedAt: Schema.NullOr(Schema.String),
  statusChangedAt: Schema.NullOr(Schema.String),
  meta: Json
})
export type CatalogEntry = typeof CatalogEntry.Type

/** What a sync did so far, or did in all. */
export const SyncCounts = Schema.Struct({
  pages: Schema.Int,
  /** Server versions the registry answered with. */
  fetched: Schema.Int,
  /** Of those, kept in the catalog. */
  upserted: Schema.Int,
  /** Of those, invalid (no name or no version) and left out. */
  skipped: Schema.Int,
  /** Of those kept, marked deleted upstream. */
  deleted: Schema.Int
})
export type SyncCounts = typeof SyncCounts.Type

export class RegistryAdded extends Schema.TaggedClass<RegistryAdded>()("registry.added", {
  ...target,
  /** Null: the global default seed, visible to every organization. */
  orgId: Schema.NullOr(Schema.NonEmptyString),
  name: Schema.String,
  baseUrl: Schema.NonEmptyString,
  enabled: Schema.Boolean,
  isDefaultSeed: Schema.Boolean,
  at: Schema.String
}) {}

/** The default seed pointed at another URL (`MCP_REGISTRY_URL` changed): its next sync is full. */
export class RegistryMoved extends Schema.TaggedClass<RegistryMoved>()("registry.moved", {
  ...target,
  baseUrl: Schema.NonEmptyString,
  at: Schema.String
}) {}

export class RegistryRemoved extends Schema.TaggedClass<RegistryRemoved>()("registry.removed", { ...target, at: Schema.String }) {}

/** The sync lease taken: no other sync of this registry runs until it ends or `leaseUntil` passes. */
export class SyncStarted extends Schema.TaggedClass<SyncStarted>()("registry.sync_started", {
  ...target,
  syncId: Schema.NonEmptyString,
  mode: SyncMode,
  /** For `server` syncs, the server's name. */
  serverName: Schema.NullOr(Schema.String),
  /** `updated_since` of the pass (last_synced_at for incremental passes, null for full ones). */
  updatedSince: Schema.NullOr(Schema.String),
  /** Where the pass resumes (the checkpoint a failed run left), null from the start. */
  fromCursor: Schema.NullOr(Schema.String),
  /** Whether it resumes the unfinished pass (its checkpoint and its beginning) rather than begin one. */
  resumed: Schema.Boolean,
  /** A sync whose lease had run out, taken over. */
  supersedes: Schema.NullOr(Schema.String),
  leaseMs: Schema.Int,
  at: Schema.String
}) {}

/** A page upserted into the catalog; the checkpoint moves to `nextCursor`. */
export class PageSynced extends Schema.TaggedClass<PageSynced>()("registry.page_synced", {
  ...target,
  syncId: Schema.NonEmptyString,
  servers: Schema.Array(CatalogEntry),
  fetched: Schema.Int,
  skipped: Schema.Int,
  /** Null: the last page of the pass. */
  nextCursor: Schema.NullOr(Schema.String),
  at: Schema.String
}) {}

export class SyncCompleted extends Schema.TaggedClass<SyncCompleted>()("registry.sync_completed", {
  ...target,
  syncId: Schema.NonEmptyString,
  mode: SyncMode,
  /** The new last_synced_at: when the pass began (null for a one-server sync, which moves no checkpoint). */
  syncedAt: Schema.NullOr(Schema.String),
  durationMs: Schema.Int,
  counts: SyncCounts,
  at: Schema.String
}) {}

/** The checkpoint stays where the last page left it; the next run resumes from there. */
export class SyncFailed extends Schema.TaggedClass<SyncFailed>()("registry.sync_failed", {
  ...target,
  syncId: Schema.NonEmptyString,
  mode: SyncMode,
  reason: Schema.String,
  durationMs: Schema.Int,
  counts: SyncCounts,
  at: Schema.String
}) {}

/** A catalog server's README, rendered and sanitized (null: none found on the supported host). */
export class ReadmeFetched extends Schema.TaggedClass<ReadmeFetched>()("registry.readme_fetched", {
  ...target,
  serverId: Schema.NonEmptyString,
  readmeHtml: Schema.NullOr(Schema.String),
  at: Schema.String
}) {}

export const RegistryEvent = Schema.Union(RegistryAdded, RegistryMoved, RegistryRemoved, SyncStarted, PageSynced, SyncCompleted, SyncFailed, ReadmeFetched)
export type RegistryEvent = typeof RegistryEvent.Type
