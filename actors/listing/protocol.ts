/** Commands of an org listing (`listing:<listingId>`). Its id follows from (org, plugin type, name),
 * so the one actor of that key decides whether the name is taken. Lookups (the catalog server, the
 * denylist) are made before a command is sent. */
import { Schema } from "effect"
import { HealthStatus, ListingDefinition } from "./definition.ts"

const target = { listingId: Schema.NonEmptyString, orgId: Schema.NonEmptyString }

/** Adds the listing to the allow-list, disabled (spec 3.5). */
export class InstallListing extends Schema.TaggedClass<InstallListing>()("InstallListing", {
  listingId: Schema.NonEmptyString,
  ...ListingDefinition
}) {}

export class SetListingEnabled extends Schema.TaggedClass<SetListingEnabled>()("SetListingEnabled", {
  ...target,
  enabled: Schema.Boolean
}) {}

/** Soft delete: the listing stays as a record, off the allow-list; a later install revives the name. */
export class UninstallListing extends Schema.TaggedClass<UninstallListing>()("UninstallListing", target) {}

export class SetWorkspaceEnabled extends Schema.TaggedClass<SetWorkspaceEnabled>()("SetWorkspaceEnabled", {
  ...target,
  workspaceId: Schema.NonEmptyString,
  enabled: Schema.Boolean
}) {}

/**
 * What a health check found (it connects first; the listing only records). `oauthRequired`: the
 * server answered 401 naming an authorization server, so the listing needs an OAuth connection.
 */
export class RecordHealth extends Schema.TaggedClass<RecordHealth>()("RecordHealth", {
  ...target,
  workspaceId: Schema.NonEmptyString,
  status: HealthStatus,
  error: Schema.NullOr(Schema.String),
  tools: Schema.Array(Schema.String),
  oauthRequired: Schema.optional(Schema.Boolean)
}) {}

export const ListingCommand = Schema.Union(InstallListing, SetListingEnabled, UninstallListing, SetWorkspaceEnabled, RecordHealth)
export type ListingCommand = typeof ListingCommand.Type
