/** Rejections of listing commands, with the HTTP status, code and reason each maps to. */
import { Schema } from "effect"

/** 404 `not_found`, reason `listing_not_found`: none in this organization, or uninstalled. */
export class ListingNotFound extends Schema.TaggedError<ListingNotFound>()("ListingNotFound", {
  listingId: Schema.String
}) {}

/** 409 `conflict`, reason `listing_exists`: the organization's allow-list already holds the name. */
export class ListingExists extends Schema.TaggedError<ListingExists>()("ListingExists", {
  listingId: Schema.String,
  name: Schema.String
}) {}

/** 409 `conflict`, reason `capability_listing`: a capability pack is not enabled per workspace (spec 4.5). */
export class CapabilityListing extends Schema.TaggedError<CapabilityListing>()("CapabilityListing", {
  listingId: Schema.String
}) {}

/** 409 `conflict`, reason `listing_disabled`: a workspace may enable only a listing its organization enabled. */
export class ListingDisabledInOrg extends Schema.TaggedError<ListingDisabledInOrg>()("ListingDisabledInOrg", {
  listingId: Schema.String
}) {}

/** 409 `conflict`, reason `not_enabled_in_workspace`: a health check of a server the workspace has not enabled. */
export class NotEnabledInWorkspace extends Schema.TaggedError<NotEnabledInWorkspace>()("NotEnabledInWorkspace", {
  listingId: Schema.String,
  workspaceId: Schema.String
}) {}

export const ListingError = Schema.Union(ListingNotFound, ListingExists, CapabilityListing, ListingDisabledInOrg, NotEnabledInWorkspace)
export type ListingError = typeof ListingError.Type
