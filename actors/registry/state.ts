import { Schema } from "effect"
import { SyncCounts, SyncMode } from "./events.ts"

/** The sync holding the lease. */
export const ActiveSync = Schema.Struct({
  syncId: Schema.String,
  mode: SyncMode,
  startedAt: Schema.String,
  leaseMs: Schema.Int,
  leaseUntil: Schema.String,
  counts: SyncCounts
})
export type ActiveSync = typeof ActiveSync.Type

/** A pass over the registry not finished yet: where it stands, what it asks for, when it began. */
export const Checkpoint = Schema.Struct({
  cursor: Schema.NullOr(Schema.String),
  updatedSince: Schema.NullOr(Schema.String),
  passStartedAt: Schema.String
})
export type Checkpoint = typeof Checkpoint.Type

/** How the last sync ended. */
export const SyncOutcome = Schema.Struct({
  syncId: Schema.String,
  mode: SyncMode,
  status: Schema.Literal("succeeded", "failed"),
  reason: Schema.NullOr(Schema.String),
  startedAt: Schema.String,
  endedAt: Schema.String,
  durationMs: Schema.Int,
  counts: SyncCounts
})
export type SyncOutcome = typeof SyncOutcome.Type

export const LiveRegistry = Schema.TaggedStruct("Live", {
  registryId: Schema.String,
  orgId: Schema.NullOr(Schema.String),
  name: Schema.String,
  baseUrl: Schema.String,
  enabled: Schema.Boolean,
  isDefaultSeed: Schema.Boolean,
  createdAt: Schema.String,
  lastSyncedAt: Schema.NullOr(Schema.String),
  /** Null when no pass is under way. */
  checkpoint: Schema.NullOr(Checkpoint),
  sync: Schema.NullOr(ActiveSync),
  lastSync: Schema.NullOr(SyncOutcome)
})
export type LiveRegistry = typeof LiveRegistry.Type

export const RegistryState = Schema.Union(
  Schema.TaggedStruct("Absent", {}),
  LiveRegistry,
  Schema.TaggedStruct("Removed", { registryId: Schema.String, orgId: Schema.NullOr(Schema.String) })
)
export type RegistryState = typeof RegistryState.Type

export const initialRegistryState: RegistryState = { _tag: "Absent" }

export const noCounts: SyncCounts = { pages: 0, fetched: 0, upserted: 0, skipped: 0, deleted: 0 }

/** When a lease taken (or renewed) at `at` runs out. */
export const leaseEnd = (at: string, leaseMs: number) => new Date(Date.parse(at) + leaseMs).toISOString()
