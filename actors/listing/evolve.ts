import type { WorkspaceInstall } from "./definition.ts"
import type { ListingEvent } from "./events.ts"
import type { ListingState, LiveListing } from "./state.ts"

const withWorkspace = (state: LiveListing, workspaceId: string, change: Partial<WorkspaceInstall> & { readonly updatedAt: string }): LiveListing => {
  const before: WorkspaceInstall = state.workspaces[workspaceId] ?? {
    enabled: false,
    healthStatus: "unknown",
    lastHealthCheckAt: null,
    healthError: null,
    tools: [],
    updatedAt: change.updatedAt
  }
  return { ...state, workspaces: { ...state.workspaces, [workspaceId]: { ...before, ...change } } }
}

export const evolve = (state: ListingState, event: ListingEvent): ListingState => {
  if (event._tag === "listing.installed") {
    const { _tag, at, ...fields } = event
    // a reinstall keeps the workspace installs, all disabled by the uninstall: each workspace enables it again
    const workspaces = state._tag === "Live" ? state.workspaces : {}
    return { _tag: "Live", ...fields, enabled: false, createdAt: at, updatedAt: at, deletedAt: null, workspaces }
  }
  if (state._tag !== "Live") return state
  switch (event._tag) {
    case "listing.enabled":
      return { ...state, enabled: true, updatedAt: event.at }
    case "listing.disabled":
      return { ...state, enabled: false, updatedAt: event.at }
    case "listing.uninstalled":
      return {
        ...state,
        enabled: false,
        deletedAt: event.at,
        updatedAt: event.at,
        workspaces: Object.fromEntries(Object.entries(state.workspaces).map(([id, install]) => [id, { ...install, enabled: false, updatedAt: event.at }]))
      }
    case "listing.workspace_enabled":
      return withWorkspace(state, event.workspaceId, { enabled: true, updatedAt: event.at })
    case "listing.workspace_disabled":
      return withWorkspace(state, event.workspaceId, { enabled: false, updatedAt: event.at })
    case "listing.oauth_detected":
      // a secret's header settings no longer apply: the bearer is the OAuth access token
      return { ...state, authKind: "oauth", authConfig: { detectedAt: event.at }, updatedAt: event.at }
    case "listing.health_recorded":
      return withWorkspace(state, event.workspaceId, {
        healthStatus: event.status,
        healthError: event.error,
        tools: event.tools,
        lastHealthCheckAt: event.at,
        updatedAt: event.at
      })
  }
}
