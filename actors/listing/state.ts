import { Schema } from "effect"
import { ListingDefinition, WorkspaceInstall } from "./definition.ts"

export const LiveListing = Schema.TaggedStruct("Live", {
  listingId: Schema.String,
  ...ListingDefinition,
  enabled: Schema.Boolean,
  createdAt: Schema.String,
  updatedAt: Schema.String,
  /** The soft-delete marker: set by an uninstall, cleared by the next install of the name. */
  deletedAt: Schema.NullOr(Schema.String),
  /** By workspace id. */
  workspaces: Schema.Record({ key: Schema.String, value: WorkspaceInstall })
})
export type LiveListing = typeof LiveListing.Type

export const ListingState = Schema.Union(Schema.TaggedStruct("Absent", {}), LiveListing)
export type ListingState = typeof ListingState.Type

export const initialListingState: ListingState = { _tag: "Absent" }

/** On the organization's allow-list: installed and not uninstalled since. */
export const onAllowList = (state: ListingState): state is LiveListing => state._tag === "Live" && state.deletedAt === null
