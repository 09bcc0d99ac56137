import type { RegistryEvent, SyncCompleted, SyncFailed } from "./events.ts"
import { leaseEnd, type LiveRegistry, noCounts, type RegistryState, type SyncOutcome } from "./state.ts"

const ended = (state: LiveRegistry, event: SyncCompleted | SyncFailed, status: "succeeded" | "failed", reason: string | null): SyncOutcome => ({
  syncId: event.syncId,
  mode: event.mode,
  status,
  reason,
  startedAt: state.sync?.startedAt ?? event.at,
  endedAt: event.at,
  durationMs: event.durationMs,
  counts: event.counts
})

export const evolve = (state: RegistryState, event: RegistryEvent): RegistryState => {
  if (event._tag === "registry.added") {
    const { _tag, at, ...fields } = event
    return { _tag: "Live", ...fields, createdAt: at, lastSyncedAt: null, checkpoint: null, sync: null, lastSync: null }
  }
  if (state._tag !== "Live") return state
  switch (event._tag) {
    case "registry.moved":
      return { ...state, baseUrl: event.baseUrl, lastSyncedAt: null, checkpoint: null, sync: null }
    case "registry.removed":
      return { _tag: "Removed", registryId: state.registryId, orgId: state.orgId }
    case "registry.sync_started": {
      const sync = { syncId: event.syncId, mode: event.mode, startedAt: event.at, leaseMs: event.leaseMs, leaseUntil: leaseEnd(event.at, event.leaseMs), counts: noCounts }
      if (event.mode === "server") return { ...state, sync }
      // a resumed pass keeps its beginning; a new one begins now
      const checkpoint = event.resumed && state.checkpoint !== null
        ? state.checkpoint
        : { cursor: null, updatedSince: event.updatedSince, passStartedAt: event.at }
      return { ...state, sync, checkpoint }
    }
    case "registry.page_synced": {
      if (state.sync === null) return state
      const { counts } = state.sync
      const sync = {
        ...state.sync,
        // each page renews the lease: a long sync keeps it while it makes progress
        leaseUntil: leaseEnd(event.at, state.sync.leaseMs),
        counts: {
          pages: counts.pages + 1,
          fetched: counts.fetched + event.fetched,
          upserted: counts.upserted + event.servers.length,
          skipped: counts.skipped + event.skipped,
          deleted: counts.deleted + event.servers.filter((s) => s.status === "deleted").length
        }
      }
      const checkpoint = state.sync.mode === "server" || state.checkpoint === null ? state.checkpoint : { ...state.checkpoint, cursor: event.nextCursor }
      return { ...state, sync, checkpoint }
    }
    case "registry.sync_completed": {
      const lastSync = ended(state, event, "succeeded", null)
      return event.syncedAt === null ? { ...state, sync: null, lastSync } : { ...state, sync: null, lastSync, lastSyncedAt: event.syncedAt, checkpoint: null }
    }
    case "registry.sync_failed":
      return { ...state, sync: null, lastSync: ended(state, event, "failed", event.reason) }
    case "registry.readme_fetched":
      return state
  }
}
