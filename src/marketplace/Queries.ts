/**
 * The marketplace wing's SQL: its read models `registries`, `catalog_servers`, `catalog_latest`,
 * `catalog_readmes` (projected from the `registry` actor), `plugin_listings`,
 * `plugin_workspace_installs` (the `listing` actor), `plugin_credentials` (the `credential` actor),
 * and what re-authentication alerts read: `mcp_auth_alerts` and the organization's members.
 */
import { Effect } from "effect"
import type { AlertRole } from "../../actors/authalerts/events.ts"
import { ORG_SHARED_WORKSPACE } from "../../actors/credential/state.ts"
import type { ActiveSync, SyncOutcome } from "../../actors/registry/state.ts"
import { Db, query } from "../../streams/Db.ts"
import type { CatalogRow, CatalogVersion, Icon, ListedListing, Listing, Registry, Repository } from "./Api.ts"

const iso = (value: Date | string | null): string | null => (value instanceof Date ? value.toISOString() : value)

// Registries and the catalog

const toRegistry = (row: Record<string, any>): Registry => ({
  registryId: row.registry_id,
  orgId: row.org_id,
  name: row.name,
  baseUrl: row.base_url,
  enabled: row.enabled,
  isDefaultSeed: row.is_default_seed,
  lastSyncedAt: iso(row.last_synced_at),
  lastSyncedCursor: row.last_synced_cursor,
  syncing: row.sync === null ? null : { syncId: row.sync.syncId, mode: row.sync.mode, startedAt: row.sync.startedAt, counts: row.sync.counts },
  lastSync: row.last_sync
})

/** A registry the organization sees (its own or the global seed), if there is one. */
export const readRegistry = (orgId: string, registryId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("read registry", () => db.sql`
      select * from ${db.table("registries")} where registry_id = ${registryId} and (org_id = ${orgId} or org_id is null)`)
    return row === undefined ? undefined : toRegistry(row)
  })

/** The organization's registries and the global seed: the seed first, then by creation. */
export const registriesOf = (orgId: string) =>
  Effect.flatMap(Db, (db) =>
    query("list registries", () => db.sql`
      select * from ${db.table("registries")} where org_id = ${orgId} or org_id is null
      order by is_default_seed desc, created_at, registry_id`)
  ).pipe(Effect.map((rows) => rows.map(toRegistry)))

/** What a registry's row says of the state of its catalog (CatalogCache's `registryStamp`). */
export interface RegistryStampRow {
  registry_id: string
  created_at: Date | string
  base_url: string
  sync: any
  last_sync: any
}

/** The enabled registries the organization sees, by id, with what stamps their catalogs. */
export const enabledRegistriesOf = (orgId: string) =>
  Effect.flatMap(Db, (db) =>
    query("visible registries", () => db.sql`
        select registry_id, created_at, base_url, sync, last_sync from ${db.table("registries")}
        where (org_id = ${orgId} or org_id is null) and enabled order by registry_id`)
  ).pipe(Effect.map((rows) => rows as unknown as ReadonlyArray<RegistryStampRow>))

/** Every enabled registry's sync under way and last sync (what the schedule decides by). */
export const enabledRegistrySyncs = Effect.flatMap(Db, (db) =>
  query("registries due", () => db.sql`
          select registry_id, sync, last_sync from ${db.table("registries")} where enabled`)
).pipe(
  Effect.map((rows) =>
    rows.map((r) => ({ registryId: r.registry_id as string, sync: r.sync as ActiveSync | null, lastSync: r.last_sync as SyncOutcome | null }))
  )
)

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/** What a registry gave, as the answer's shape (ill-typed fields left out rather than failing the answer). */
const repositoryOf = (value: any): typeof Repository.Type | null =>
  value === null || typeof value?.url !== "string"
    ? null
    : { url: value.url, source: text(value.source), id: text(value.id), subfolder: text(value.subfolder) }

const iconsOf = (value: unknown): ReadonlyArray<typeof Icon.Type> =>
  (Array.isArray(value) ? value : [])
    .filter((icon) => typeof icon?.src === "string")
    .map((icon) => ({
      src: icon.src,
      mimeType: text(icon.mimeType),
      sizes: Array.isArray(icon.sizes) ? icon.sizes.filter((size: unknown) => typeof size === "string") : undefined,
      theme: text(icon.theme)
    }))

const toServer = (row: Record<string, any>): CatalogRow => ({
  serverId: row.server_id,
  registryId: row.registry_id,
  name: row.name,
  version: row.version,
  isLatest: row.is_latest,
  title: row.title,
  description: row.description,
  repository: repositoryOf(row.repository),
  websiteUrl: row.website_url,
  icons: iconsOf(row.icons),
  transportTypes: row.transport_types,
  authKind: row.auth_kind,
  categories: row.categories,
  status: row.status,
  publishedAt: iso(row.published_at),
  upstreamUpdatedAt: iso(row.upstream_updated_at),
  statusChangedAt: iso(row.status_changed_at)
})

export interface CatalogFilters {
  readonly status?: string | undefined
  /** A `to_tsquery` of word prefixes. */
  readonly terms?: string | undefined
  readonly transport?: string | undefined
  readonly authKind?: string | undefined
  readonly category?: string | undefined
  readonly registryId?: string | undefined
}

/**
 * Up to `rows` latest server versions of the registries `ids` after the position (name, server id)
 * `after`, filtered, by name then id: the page is found in catalog_latest (search, filters,
 * order), then its rows are read.
 */
export const catalogPage = (ids: ReadonlyArray<string>, filters: CatalogFilters, after: readonly [string, string] | undefined, rows: number) =>
  Effect.flatMap(Db, (db) => {
    const sql = db.sql
    return query("browse catalog", () => sql`
        select c.server_id, c.registry_id, c.name, c.version, true as is_latest, c.title, c.description, c.repository, c.website_url, c.icons,
          c.transport_types, c.auth_kind, c.categories, c.status, c.published_at, c.upstream_updated_at, c.status_changed_at
        from (
          select l.server_id, l.name from ${db.table("catalog_latest")} l
          where l.registry_id = any(${ids as string[]}::text[])
            ${filters.status === undefined ? sql`and l.status <> 'deleted'` : sql`and l.status = ${filters.status}`}
            ${filters.terms === undefined ? sql`` : sql`and l.search @@ to_tsquery('simple', ${filters.terms})`}
            ${filters.transport === undefined ? sql`` : sql`and l.transport_types ? ${filters.transport}`}
            ${filters.authKind === undefined ? sql`` : sql`and l.auth_kind = ${filters.authKind}`}
            ${filters.category === undefined ? sql`` : sql`and l.categories ? ${filters.category}`}
            ${filters.registryId === undefined ? sql`` : sql`and l.registry_id = ${filters.registryId}`}
            ${after === undefined ? sql`` : sql`and (l.name, l.server_id) > (${after[0]}, ${after[1]})`}
          order by l.name, l.server_id
          limit ${rows}
        ) page
        join ${db.table("catalog_servers")} c on c.server_id = page.server_id
        order by page.name, page.server_id`)
  }).pipe(Effect.map((found) => found.map(toServer)))

/** A catalog server of a registry the organization sees, with its packages, remotes, meta and the README kept, if there is one. */
export const readCatalogServer = (orgId: string, serverId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("read catalog server", () => db.sql`
        select c.*, (l.version is not null) as is_latest, m.readme_html, m.readme_fetched_at
        from ${db.table("catalog_servers")} c
        join ${db.table("registries")} r on r.registry_id = c.registry_id
        left join ${db.table("catalog_latest")} l on l.registry_id = c.registry_id and l.name = c.name and l.version = c.version
        left join ${db.table("catalog_readmes")} m on m.server_id = c.server_id
        where c.server_id = ${serverId} and (r.org_id = ${orgId} or r.org_id is null)`)
    if (row === undefined) return undefined
    return {
      server: toServer(row),
      packages: row.packages,
      remotes: row.remotes,
      meta: row.meta,
      /** The repository as the registry gave it (the README is found from it). */
      repository: row.repository as unknown,
      readmeHtml: (row.readme_html ?? null) as string | null,
      readmeFetchedAt: iso(row.readme_fetched_at)
    }
  })

/** The versions of a registry's server known, newest published first. */
export const catalogServerVersions = (registryId: string, name: string) =>
  Effect.flatMap(Db, (db) =>
    query("catalog server versions", () => db.sql`
        select c.server_id, c.version, c.status, (l.version is not null) as is_latest
        from ${db.table("catalog_servers")} c
        left join ${db.table("catalog_latest")} l on l.registry_id = c.registry_id and l.name = c.name and l.version = c.version
        where c.registry_id = ${registryId} and c.name = ${name}
        order by c.published_at desc nulls last, c.version desc`)
  ).pipe(Effect.map((rows) => rows.map((v): CatalogVersion => ({ serverId: v.server_id, version: v.version, isLatest: v.is_latest, status: v.status }))))

/** A catalog server version as an install reads it. */
export interface InstallableServer {
  readonly name: string
  readonly title: string | null
  readonly description: string
  readonly packages: unknown
  readonly remotes: unknown
  readonly icons: ReadonlyArray<{ readonly src: string }>
}

/** The catalog server's version, when its registry is one the organization sees and it is not deleted. */
export const installableServer = (orgId: string, serverId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("catalog server for install", () => db.sql`
      select c.* from ${db.table("catalog_servers")} c join ${db.table("registries")} r using (registry_id)
      where c.server_id = ${serverId} and (r.org_id is null or r.org_id = ${orgId}) and c.status <> 'deleted'`)
    if (row === undefined) return undefined
    const server: InstallableServer = { name: row.name, title: row.title, description: row.description, packages: row.packages, remotes: row.remotes, icons: row.icons }
    return server
  })

// The allow-list

const toListing = (row: Record<string, any>): Listing => ({
  listingId: row.listing_id,
  pluginType: row.plugin_type,
  catalogServerId: row.catalog_server_id,
  source: row.source,
  name: row.name,
  title: row.title,
  description: row.description,
  iconUrl: row.icon_url,
  endpointUrl: row.endpoint_url,
  transport: row.transport,
  authKind: row.auth_kind,
  authConfig: row.auth_config,
  enabled: row.enabled,
  config: row.config,
  createdAt: iso(row.created_at)!,
  updatedAt: iso(row.updated_at)!,
  deletedAt: iso(row.deleted_at)
})

/** A listing of the organization as the read model holds it, if it is not uninstalled. */
export const readListing = (orgId: string, listingId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("read listing", () => db.sql`
      select * from ${db.table("plugin_listings")} where listing_id = ${listingId} and org_id = ${orgId} and deleted_at is null`)
    return row === undefined ? undefined : toListing(row)
  })

export interface ListingFilters {
  readonly pluginType?: string | undefined
  readonly enabled?: boolean | undefined
  readonly includeDeleted?: boolean | undefined
}

const toListedListing = (row: Record<string, any>): ListedListing => ({
  ...toListing(row),
  workspace:
    row.ws_enabled === null
      ? null
      : { enabled: row.ws_enabled, healthStatus: row.health_status, lastHealthCheckAt: iso(row.last_health_check_at), healthError: row.health_error },
  credential: credentialStateOf(row, "credential"),
  sharedCredential: credentialStateOf(row, "shared")
})

/** A credential's state as the list shows it, from the columns `<prefix>_status` and the rest. */
const credentialStateOf = (row: Record<string, any>, prefix: "credential" | "shared") =>
  row[`${prefix}_status`] === null
    ? null
    : {
      status: row[`${prefix}_status`],
      expiresAt: iso(row[`${prefix}_expires_at`]),
      lastRefreshedAt: iso(row[`${prefix}_refreshed_at`]),
      updatedAt: iso(row[`${prefix}_updated_at`])!
    }

/** Up to `rows` of the organization's listings after the id `after`, by id, with the workspace's install and credential of each. */
export const listingsAfter = (orgId: string, workspaceId: string | null, filters: ListingFilters, after: string | undefined, rows: number) =>
  Effect.flatMap(Db, (db) =>
    query("list listings", () => db.sql`
        select l.*, w.enabled as ws_enabled, w.health_status, w.last_health_check_at, w.health_error,
          c.status as credential_status, c.expires_at as credential_expires_at, c.last_refreshed_at as credential_refreshed_at, c.updated_at as credential_updated_at,
          s.status as shared_status, s.expires_at as shared_expires_at, s.last_refreshed_at as shared_refreshed_at, s.updated_at as shared_updated_at
        from ${db.table("plugin_listings")} l
        left join ${db.table("plugin_workspace_installs")} w on w.listing_id = l.listing_id and w.workspace_id = ${workspaceId}
        left join ${db.table("plugin_credentials")} c on c.listing_id = l.listing_id and c.workspace_id = ${workspaceId}
        left join ${db.table("plugin_credentials")} s on s.listing_id = l.listing_id and s.workspace_id = ${ORG_SHARED_WORKSPACE}
        where l.org_id = ${orgId}
          ${filters.includeDeleted === true ? db.sql`` : db.sql`and l.deleted_at is null`}
          ${filters.pluginType === undefined ? db.sql`` : db.sql`and l.plugin_type = ${filters.pluginType}`}
          ${filters.enabled === undefined ? db.sql`` : db.sql`and l.enabled = ${filters.enabled}`}
          ${after === undefined ? db.sql`` : db.sql`and l.listing_id > ${after}`}
        order by l.listing_id limit ${rows}`)
  ).pipe(Effect.map((found) => found.map(toListedListing)))

// Credentials

/** The credential's row, if the workspace has one for the listing. */
export const readCredential = (workspaceId: string, listingId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("read credential", () => db.sql`
      select * from ${db.table("plugin_credentials")} where workspace_id = ${workspaceId} and listing_id = ${listingId}`)
    return row
  })

/** An active OAuth credential due for a refresh. */
export interface DueCredential {
  readonly credentialId: string
  readonly orgId: string
  readonly workspaceId: string
  readonly listingId: string
  readonly listingName: string
  readonly expiresAt: number
}

/** The active OAuth credentials whose access token expires by `dueBy` (ISO 8601). */
export const credentialsDueBy = (dueBy: string) =>
  Effect.flatMap(Db, (db) =>
    query("credentials due for refresh", () => db.sql`
        select c.credential_id, c.org_id, c.workspace_id, c.listing_id, c.expires_at, coalesce(l.title, l.name) as listing_name
        from ${db.table("plugin_credentials")} c join ${db.table("plugin_listings")} l using (listing_id)
        where c.status = 'active' and c.auth_kind = 'oauth' and c.expires_at is not null and c.expires_at <= ${dueBy}`)
  ).pipe(
    Effect.map((rows) =>
      rows.map((r): DueCredential => ({
        credentialId: r.credential_id,
        orgId: r.org_id,
        workspaceId: r.workspace_id,
        listingId: r.listing_id,
        listingName: r.listing_name,
        expiresAt: (r.expires_at as Date).getTime()
      }))
    )
  )

// Re-authentication alerts

/** The organization's `mcp_auth_alerts` setting, if an Owner set it. */
export const readMcpAuthAlerts = (orgId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("mcp_auth_alerts", () => db.sql`
      select send_email, roles from ${db.table("mcp_auth_alerts")} where org_id = ${orgId}`)
    return row === undefined ? undefined : { sendEmail: row.send_email as boolean, roles: row.roles as ReadonlyArray<AlertRole> }
  })

/**
 * The organization's members who are its owners (when `owners`) or hold one of `workspaceRoles`
 * (`admin`, `member`, `viewer`) in the workspace `workspaceId` (in any of its workspaces when
 * null), by user id; each with the slug of the workspace whose pages to send them to: `workspaceId`,
 * else the first (by slug) they are a member of, else the organization's first.
 */
export const membersHolding = (orgId: string, workspaceId: string | null, owners: boolean, workspaceRoles: ReadonlyArray<string>) =>
  Effect.flatMap(Db, (db) =>
    query("alert recipients", () => db.sql`
      select u.user_id, u.email, coalesce(
        (select w.slug from ${db.table("workspace_members")} wm join ${db.table("workspaces")} w on w.workspace_id = wm.workspace_id
          where wm.user_id = om.user_id and w.org_id = ${orgId} and (${workspaceId}::text is null or w.workspace_id = ${workspaceId})
          order by w.slug limit 1),
        (select w.slug from ${db.table("workspaces")} w
          where w.org_id = ${orgId} and (${workspaceId}::text is null or w.workspace_id = ${workspaceId})
          order by w.slug limit 1)) as workspace_slug
      from ${db.table("org_members")} om join ${db.table("users")} u on u.user_id = om.user_id
      where om.org_id = ${orgId} and (
        (${owners} and om.role = 'owner')
        or exists (
          select 1 from ${db.table("workspace_members")} wm join ${db.table("workspaces")} w on w.workspace_id = wm.workspace_id
          where wm.user_id = om.user_id and w.org_id = ${orgId} and wm.role = any(${workspaceRoles as string[]}::text[])
            and (${workspaceId}::text is null or wm.workspace_id = ${workspaceId})))
      order by u.user_id`)
  ).pipe(Effect.map((rows) => rows.map((r) => ({ userId: r.user_id as string, email: r.email as string, workspaceSlug: r.workspace_slug as string | null }))))
