/** Events of an org listing; `_tag` is the published type and is never renamed. */
import { Schema } from "effect"
import { HealthStatus, ListingDefinition } from "./definition.ts"

const target = { listingId: Schema.NonEmptyString, orgId: Schema.NonEmptyString }

export class ListingInstalled extends Schema.TaggedClass<ListingInstalled>()("listing.installed", {
  listingId: Schema.NonEmptyString,
  ...ListingDefinition,
  at: Schema.String
}) {}

export class ListingEnabled extends Schema.TaggedClass<ListingEnabled>()("listing.enabled", { ...target, at: Schema.String }) {}

export class ListingDisabled extends Schema.TaggedClass<ListingDisabled>()("listing.disabled", { ...target, at: Schema.String }) {}

/** Off the allow-list; every workspace install of it is disabled with it. */
export class ListingUninstalled extends Schema.TaggedClass<ListingUninstalled>()("listing.uninstalled", { ...target, at: Schema.String }) {}

export class WorkspaceEnabled extends Schema.TaggedClass<WorkspaceEnabled>()("listing.workspace_enabled", {
  ...target,
  workspaceId: Schema.NonEmptyString,
  at: Schema.String
}) {}

export class WorkspaceDisabled extends Schema.TaggedClass<WorkspaceDisabled>()("listing.workspace_disabled", {
  ...target,
  workspaceId: Schema.NonEmptyString,
  at: Schema.String
}) {}

export class HealthRecorded extends Schema.TaggedClass<HealthRecorded>()("listing.health_recorded", {
  ...target,
  workspaceId: Schema.NonEmptyString,
  status: HealthStatus,
  error: Schema.NullOr(Schema.String),
  tools: Schema.Array(Schema.String),
  at: Schema.String
}) {}

/**
 * A connection from `workspaceId` found the server asking for OAuth (a 401 naming an authorization
 * server, RFC 9728): the listing authenticates with `oauth` from now on, whatever it was installed as.
 */
export class OAuthDetected extends Schema.TaggedClass<OAuthDetected>()("listing.oauth_detected", {
  ...target,
  workspaceId: Schema.NonEmptyString,
  at: Schema.String
}) {}

export const ListingEvent = Schema.Union(
  ListingInstalled,
  ListingEnabled,
  ListingDisabled,
  ListingUninstalled,
  WorkspaceEnabled,
  WorkspaceDisabled,
  HealthRecorded,
  OAuthDetected
)
export type ListingEvent = typeof ListingEvent.Type
