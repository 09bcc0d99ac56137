/** Commands of a registry (`registry:<registryId>`). What needs I/O (fetching pages, READMEs) is done
 * by the sync worker before a command is sent; the registry decides only what it may record. */
import { Schema } from "effect"
import { CatalogEntry, SyncMode } from "./events.ts"

const target = { registryId: Schema.NonEmptyString }

/** Adds the registry; for the default seed, also (re)points it at `baseUrl` (idempotent at each start). */
export class AddRegistry extends Schema.TaggedClass<AddRegistry>()("AddRegistry", {
  ...target,
  orgId: Schema.NullOr(Schema.NonEmptyString),
  name: Schema.String,
  baseUrl: Schema.NonEmptyString,
  enabled: Schema.Boolean,
  isDefaultSeed: Schema.Boolean
}) {}

/** Removes an organization's registry (the caller's `orgId` must be its organization). */
export class RemoveRegistry extends Schema.TaggedClass<RemoveRegistry>()("RemoveRegistry", {
  ...target,
  orgId: Schema.NonEmptyString
}) {}

/** Takes the sync lease. `full` forces a pass from scratch; `incremental` is full the first time. */
export class StartSync extends Schema.TaggedClass<StartSync>()("StartSync", {
  ...target,
  syncId: Schema.NonEmptyString,
  mode: SyncMode,
  serverName: Schema.optional(Schema.NonEmptyString),
  leaseMs: Schema.Int.pipe(Schema.positive())
}) {}

export class RecordPage extends Schema.TaggedClass<RecordPage>()("RecordPage", {
  ...target,
  syncId: Schema.NonEmptyString,
  servers: Schema.Array(CatalogEntry),
  fetched: Schema.Int,
  skipped: Schema.Int,
  nextCursor: Schema.NullOr(Schema.String)
}) {}

export class CompleteSync extends Schema.TaggedClass<CompleteSync>()("CompleteSync", { ...target, syncId: Schema.NonEmptyString }) {}

export class FailSync extends Schema.TaggedClass<FailSync>()("FailSync", { ...target, syncId: Schema.NonEmptyString, reason: Schema.String }) {}

export class RecordReadme extends Schema.TaggedClass<RecordReadme>()("RecordReadme", {
  ...target,
  serverId: Schema.NonEmptyString,
  readmeHtml: Schema.NullOr(Schema.String)
}) {}

export const RegistryCommand = Schema.Union(AddRegistry, RemoveRegistry, StartSync, RecordPage, CompleteSync, FailSync, RecordReadme)
export type RegistryCommand = typeof RegistryCommand.Type
