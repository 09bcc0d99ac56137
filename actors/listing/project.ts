/** Read models (migration 0017): `plugin_listings`, one row per listing (uninstalled ones keep
 * theirs, with `deleted_at`), and `plugin_workspace_installs`, one row per workspace install. */
import type { EventContext, Json, RowOp } from "../kernel.ts"
import type { ListingEvent } from "./events.ts"
import type { ListingState, LiveListing } from "./state.ts"

const listingRow = (l: LiveListing): RowOp => ({
  op: "upsert",
  table: "plugin_listings",
  pk: ["listing_id"],
  row: {
    listing_id: l.listingId,
    org_id: l.orgId,
    plugin_type: l.pluginType,
    catalog_server_id: l.catalogServerId,
    source: l.source,
    name: l.name,
    title: l.title,
    description: l.description,
    icon_url: l.iconUrl,
    endpoint_url: l.endpointUrl,
    transport: l.transport,
    auth_kind: l.authKind,
    auth_config: l.authConfig as unknown as Json,
    enabled: l.enabled,
    config: l.config as unknown as Json,
    created_at: l.createdAt,
    updated_at: l.updatedAt,
    deleted_at: l.deletedAt
  }
})

const installRow = (l: LiveListing, workspaceId: string): RowOp => {
  const install = l.workspaces[workspaceId]
  return {
    op: "upsert",
    table: "plugin_workspace_installs",
    pk: ["workspace_id", "listing_id"],
    row: {
      workspace_id: workspaceId,
      listing_id: l.listingId,
      org_id: l.orgId,
      enabled: install.enabled,
      health_status: install.healthStatus,
      last_health_check_at: install.lastHealthCheckAt,
      health_error: install.healthError,
      tools: install.tools as unknown as Json,
      updated_at: install.updatedAt
    }
  }
}

export const project = (after: ListingState, event: ListingEvent, _ctx: EventContext): ReadonlyArray<RowOp> => {
  if (after._tag !== "Live") return []
  switch (event._tag) {
    case "listing.installed":
    case "listing.enabled":
    case "listing.disabled":
    case "listing.oauth_detected":
      return [listingRow(after)]
    case "listing.uninstalled":
      return [listingRow(after), ...Object.keys(after.workspaces).map((workspaceId) => installRow(after, workspaceId))]
    case "listing.workspace_enabled":
    case "listing.workspace_disabled":
    case "listing.health_recorded":
      return [installRow(after, event.workspaceId)]
  }
}
