/** Read models (migration 0015): `registries` (one row per live registry, its checkpoint and syncs),
 * `registry_syncs` (each ended sync), `catalog_servers` (one row per server version),
 * `catalog_latest` (a name's newest version: one row per name, so is_latest holds on one version
 * only) and `catalog_readmes`. */
import type { EventContext, Json, RowOp } from "../kernel.ts"
import type { CatalogEntry, RegistryEvent } from "./events.ts"
import type { LiveRegistry, RegistryState } from "./state.ts"

const registryRow = (r: LiveRegistry): RowOp => ({
  op: "upsert",
  table: "registries",
  pk: ["registry_id"],
  row: {
    registry_id: r.registryId,
    org_id: r.orgId,
    name: r.name,
    base_url: r.baseUrl,
    enabled: r.enabled,
    is_default_seed: r.isDefaultSeed,
    created_at: r.createdAt,
    last_synced_at: r.lastSyncedAt,
    last_synced_cursor: r.checkpoint?.cursor ?? null,
    sync: r.sync as unknown as Json,
    last_sync: r.lastSync as unknown as Json
  }
})

const catalogRows = (registryId: string, s: CatalogEntry, at: string): ReadonlyArray<RowOp> => [
  {
    op: "upsert",
    table: "catalog_servers",
    pk: ["server_id"],
    row: {
      server_id: s.serverId,
      registry_id: registryId,
      name: s.name,
      version: s.version,
      title: s.title,
      description: s.description,
      repository: s.repository,
      website_url: s.websiteUrl,
      icons: s.icons,
      packages: s.packages,
      remotes: s.remotes,
      transport_types: s.transportTypes as Json,
      auth_kind: s.authKind,
      categories: s.categories as Json,
      status: s.status,
      published_at: s.publishedAt,
      upstream_updated_at: s.upstreamUpdatedAt,
      status_changed_at: s.statusChangedAt,
      meta: s.meta,
      synced_at: at
    }
  },
  ...(s.isLatest
    ? [{
        op: "upsert",
        table: "catalog_latest",
        pk: ["registry_id", "name"],
        row: {
          registry_id: registryId,
          name: s.name,
          version: s.version,
          server_id: s.serverId,
          title: s.title,
          description: s.description,
          status: s.status,
          transport_types: s.transportTypes as Json,
          auth_kind: s.authKind,
          categories: s.categories as Json
        }
      } as const]
    : [])
]

export const project = (after: RegistryState, event: RegistryEvent, ctx: EventContext): ReadonlyArray<RowOp> => {
  if (event._tag === "registry.removed") {
    return [{ op: "delete", table: "registries", pk: ["registry_id"], row: { registry_id: event.registryId } }]
  }
  if (after._tag !== "Live") return []
  switch (event._tag) {
    case "registry.page_synced":
      return [registryRow(after), ...event.servers.flatMap((s) => catalogRows(after.registryId, s, event.at))]
    case "registry.readme_fetched":
      return [{
        op: "upsert",
        table: "catalog_readmes",
        pk: ["server_id"],
        row: { server_id: event.serverId, registry_id: event.registryId, readme_html: event.readmeHtml, readme_fetched_at: event.at }
      }]
    case "registry.sync_completed":
    case "registry.sync_failed": {
      const outcome = after.lastSync!
      return [
        registryRow(after),
        {
          op: "insert",
          table: "registry_syncs",
          pk: ["sync_id"],
          row: {
            sync_id: outcome.syncId,
            registry_id: after.registryId,
            mode: outcome.mode,
            status: outcome.status,
            reason: outcome.reason,
            started_at: outcome.startedAt,
            ended_at: outcome.endedAt,
            duration_ms: outcome.durationMs,
            counts: outcome.counts as unknown as Json,
            recorded_at: ctx.at
          }
        }
      ]
    }
    default:
      return [registryRow(after)]
  }
}
