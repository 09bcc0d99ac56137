/**
 * The marketplace's registries and catalog (spec 2.9, 4.5, 6.3.3, 6.3.4) as capabilities on the API
 * (`/v1/{org}/{ws}/plugin/...`) and MCP: `plugin.registry.add/remove/list/sync`,
 * `plugin.catalog.browse/get`. Organization Owner and workspace Admin by default (spec 5 rule 12).
 * Registries are the organization's own plus the global default seed.
 */
import { Effect, Fiber, Schema, Struct } from "effect"
import { Json } from "../../actors/kernel.ts"
import { RegistryActor } from "../../actors/registry/actor.ts"
import { AuthKind, CatalogEntry, CatalogStatus, SyncCounts } from "../../actors/registry/events.ts"
import { AddRegistry, RemoveRegistry } from "../../actors/registry/protocol.ts"
import { type LiveRegistry, SyncOutcome } from "../../actors/registry/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { Db, query } from "../../streams/Db.ts"
import { type AnyCapability, defineCapability, type Invocation } from "../checkpoint/Capability.ts"
import { BadRequest, NotFound } from "../platform/Errors.ts"
import { CatalogCache, registryStamp } from "./CatalogCache.ts"
import { readmeOf } from "./CatalogReadme.ts"
import { normalizeBaseUrl, orgRegistryId } from "./RegistrySettings.ts"
import { RegistrySyncs } from "./RegistrySchedule.ts"
import { drivePages, startSync } from "./RegistrySync.ts"
import { type PackManifest, Packs } from "../packs/Registry.ts"
import { decodeCursor, PageLimit } from "../platform/Paging.ts"
import { pluginManagers } from "./PluginListings.ts"

const common = { scope: "organization", surfaces: ["api", "mcp"], roles: pluginManagers, claimedBy: "builtin", needsApproval: false, destructive: false } as const
const reads = { ...common, mutating: false, sensitivity: "medium" } as const
const writes = { ...common, mutating: true, changesAccess: false, sensitivity: "medium" } as const

const orgOf = (invocation: Invocation) => invocation.orgId!
const iso = (value: Date | string | null): string | null => (value instanceof Date ? value.toISOString() : value)

const RegistryId = Schema.String.pipe(Schema.pattern(/^mreg_[0-9a-f]{32}$/, { message: () => "must be a registry id (mreg_...)" }))
const ServerId = Schema.String.pipe(Schema.pattern(/^mcat_[0-9a-f]{32}$/, { message: () => "must be a catalog server id (mcat_...)" }))

const Registry = Schema.Struct({
  registryId: Schema.String,
  /** Null: the global default seed. */
  orgId: Schema.NullOr(Schema.String),
  name: Schema.String,
  baseUrl: Schema.String,
  enabled: Schema.Boolean,
  isDefaultSeed: Schema.Boolean,
  lastSyncedAt: Schema.NullOr(Schema.String),
  lastSyncedCursor: Schema.NullOr(Schema.String),
  /** The sync under way, if one holds the registry. */
  syncing: Schema.NullOr(Schema.Struct({ syncId: Schema.String, mode: Schema.String, startedAt: Schema.String, counts: SyncCounts })),
  lastSync: Schema.NullOr(SyncOutcome)
})
type Registry = typeof Registry.Type

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

const fromState = (r: LiveRegistry): Registry => ({
  registryId: r.registryId,
  orgId: r.orgId,
  name: r.name,
  baseUrl: r.baseUrl,
  enabled: r.enabled,
  isDefaultSeed: r.isDefaultSeed,
  lastSyncedAt: r.lastSyncedAt,
  lastSyncedCursor: r.checkpoint?.cursor ?? null,
  syncing: r.sync === null ? null : { syncId: r.sync.syncId, mode: r.sync.mode, startedAt: r.sync.startedAt, counts: r.sync.counts },
  lastSync: r.lastSync
})

const registryNotFound = (registryId: string) => new NotFound({ reason: "registry_not_found", message: `no registry ${registryId} in this organization` })

/** A registry the organization sees (its own or the global seed). */
const visibleRegistry = (orgId: string, registryId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("read registry", () => db.sql`
      select * from ${db.table("registries")} where registry_id = ${registryId} and (org_id = ${orgId} or org_id is null)`)
    return row === undefined ? yield* registryNotFound(registryId) : toRegistry(row)
  })

export const addRegistry = defineCapability({
  ...writes,
  name: "plugin.registry.add",
  description: "Add an MCP registry (registry API v0.1) to the organization; its servers join the catalog on its next sync. One registry per base URL.",
  input: Schema.Struct({
    name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
    baseUrl: Schema.String.pipe(Schema.maxLength(2000)),
    enabled: Schema.optional(Schema.Boolean)
  }),
  output: Registry,
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const baseUrl = normalizeBaseUrl(input.baseUrl)
      if (baseUrl === undefined) {
        return yield* new BadRequest({ reason: "invalid_registry_url", message: "baseUrl must be an http(s) URL without credentials, query or fragment" })
      }
      const orgId = orgOf(invocation)
      const registryId = orgRegistryId(orgId, baseUrl)
      const host = yield* ActorHost
      const { state } = yield* host.send(
        RegistryActor,
        registryId,
        new AddRegistry({ registryId, orgId, name: input.name, baseUrl, enabled: input.enabled ?? true, isDefaultSeed: false }),
        invocation.meta
      )
      return fromState(state as LiveRegistry)
    })
})

export const removeRegistry = defineCapability({
  ...writes,
  destructive: true,
  name: "plugin.registry.remove",
  description: "Remove one of the organization's registries; its servers leave the catalog. The default seed cannot be removed.",
  input: Schema.Struct({ registryId: RegistryId }),
  output: Schema.Struct({ registryId: Schema.String, removed: Schema.Literal(true) }),
  handler: (invocation, { registryId }) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      yield* host.send(RegistryActor, registryId, new RemoveRegistry({ registryId, orgId: orgOf(invocation) }), invocation.meta)
      return { registryId, removed: true as const }
    })
})

export const listRegistries = defineCapability({
  ...reads,
  name: "plugin.registry.list",
  description: "List the organization's registries and the global default seed, with each one's sync checkpoint and last sync.",
  input: Schema.Struct({}),
  output: Schema.Struct({ registries: Schema.Array(Registry) }),
  handler: (invocation) =>
    Effect.gen(function* () {
      const db = yield* Db
      const rows = yield* query("list registries", () => db.sql`
        select * from ${db.table("registries")} where org_id = ${orgOf(invocation)} or org_id is null
        order by is_default_seed desc, created_at, registry_id`)
      return { registries: rows.map(toRegistry) }
    })
})

export const syncRegistry = defineCapability({
  ...writes,
  name: "plugin.registry.sync",
  description:
    "Refresh a registry's catalog now (plugin/registry.sync): incremental since its last sync (resuming a failed one), `full` from scratch, or one server by `serverName`. Answers once the sync holds the registry, or with its outcome when `wait` is true.",
  input: Schema.Struct({
    registryId: RegistryId,
    serverName: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500))),
    full: Schema.optional(Schema.Boolean),
    wait: Schema.optional(Schema.Boolean)
  }),
  output: Schema.Struct({
    syncId: Schema.String,
    registryId: Schema.String,
    mode: Schema.Literal("full", "incremental", "server"),
    status: Schema.Literal("running", "succeeded", "failed"),
    reason: Schema.NullOr(Schema.String),
    durationMs: Schema.NullOr(Schema.Int),
    counts: Schema.NullOr(SyncCounts)
  }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      yield* visibleRegistry(orgOf(invocation), input.registryId)
      const mode = input.serverName !== undefined ? "server" : input.full === true ? "full" : "incremental"
      const started = yield* startSync(input.registryId, { mode, serverName: input.serverName, actor: invocation.meta.actor })
      const syncs = yield* RegistrySyncs
      const fiber = yield* syncs.fork(drivePages(started))
      const running = { syncId: started.syncId, registryId: started.registryId, mode: started.mode, status: "running" as const, reason: null, durationMs: null, counts: null }
      if (input.wait !== true) return running
      const outcome = yield* Fiber.join(fiber)
      return { ...running, status: outcome.status, reason: outcome.reason, durationMs: outcome.durationMs, counts: outcome.counts }
    })
})

/** Spec 2.9's repository fields (a registry's other fields are not kept in answers). */
const Repository = Schema.Struct({
  url: Schema.String,
  source: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  subfolder: Schema.optional(Schema.String)
})

const Icon = Schema.Struct({
  src: Schema.String,
  mimeType: Schema.optional(Schema.String),
  sizes: Schema.optional(Schema.Array(Schema.String)),
  theme: Schema.optional(Schema.String)
})

/** A catalog entry as callers see it: with its registry, repository and icons in the answer's shapes, without packages, remotes and meta. */
const CatalogServer = Schema.Struct({
  ...Struct.omit(CatalogEntry.fields, "packages", "remotes", "meta"),
  registryId: Schema.String,
  repository: Schema.NullOr(Repository),
  icons: Schema.Array(Icon)
})
type CatalogServer = typeof CatalogServer.Type

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

const toServer = (row: Record<string, any>): CatalogServer => ({
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

/** Each word of a search, as a prefix of a word of the name, title or description (all must match). */
const prefixQuery = (search: string): string | undefined => {
  const words = search.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w !== "")
  return words.length === 0 ? undefined : words.map((w) => `${w}:*`).join(" & ")
}

/** An opaque position: the base64url of the last row's name and id. */
const BrowseCursor = Schema.compose(Schema.StringFromBase64Url, Schema.parseJson(Schema.Tuple(Schema.String, ServerId)))

const PluginType = Schema.Literal("mcp_server", "integration", "content_tool", "capability")

/** The registry id packs carry in catalog answers: they come from the pack registry, not a registry of servers. */
const PACK_REGISTRY_ID = "svc"

/**
 * Spec 4.5: the pack registry as catalog entries (auth kind `none`, no transports, the pack's
 * category), without `hidden` and `preview` packs, filtered as servers are; one page (a handful).
 */
const browsePacks = (
  packs: ReadonlyArray<PackManifest>,
  input: { readonly search?: string | undefined; readonly transport?: string | undefined; readonly authKind?: string | undefined; readonly category?: string | undefined; readonly status?: string | undefined; readonly registryId?: string | undefined }
): ReadonlyArray<CatalogServer> => {
  const words = (input.search ?? "").toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w !== "")
  return packs
    .filter((pack) => pack.visibility !== "hidden" && pack.visibility !== "preview")
    .filter((pack) => {
      const packWords = `${pack.id} ${pack.name} ${pack.description}`.toLowerCase().split(/[^\p{L}\p{N}]+/u)
      return words.every((w) => packWords.some((p) => p.startsWith(w)))
    })
    .filter((pack) => input.transport === undefined && (input.authKind ?? "none") === "none" && (input.status ?? "active") === "active"
      && (input.category ?? pack.category) === pack.category && input.registryId === undefined)
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((pack) => ({
      serverId: pack.id,
      registryId: PACK_REGISTRY_ID,
      name: pack.id,
      version: pack.version,
      isLatest: true,
      title: pack.name,
      description: pack.description,
      repository: null,
      websiteUrl: null,
      icons: pack.icon === undefined ? [] : [{ src: pack.icon }],
      transportTypes: [],
      authKind: "none" as const,
      categories: [pack.category],
      status: "active" as const,
      publishedAt: null,
      upstreamUpdatedAt: null,
      statusChangedAt: null
    }))
}

export const browseCatalog = defineCapability({
  ...reads,
  name: "plugin.catalog.browse",
  description:
    "Browse the catalog of MCP servers from the organization's registries and the default seed: each server's latest version, searched over name, title and description (word prefixes), filtered by transport, auth kind, category and status (deleted ones only when asked), in pages; pluginType capability lists the capability packs instead.",
  input: Schema.Struct({
    search: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
    transport: Schema.optional(Schema.String),
    authKind: Schema.optional(AuthKind),
    category: Schema.optional(Schema.String),
    status: Schema.optional(CatalogStatus),
    registryId: Schema.optional(RegistryId),
    pluginType: Schema.optional(PluginType),
    limit: Schema.optional(PageLimit),
    cursor: Schema.optional(Schema.String)
  }),
  output: Schema.Struct({ servers: Schema.Array(CatalogServer), nextCursor: Schema.NullOr(Schema.String) }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      if (input.pluginType === "capability") return { servers: browsePacks((yield* Packs).packs, input), nextCursor: null }
      // the registries list MCP servers only
      if (input.pluginType !== undefined && input.pluginType !== "mcp_server") return { servers: [], nextCursor: null }
      const db = yield* Db
      const cache = yield* CatalogCache
      const limit = input.limit ?? 20
      const after = yield* decodeCursor(BrowseCursor, input.cursor)
      const terms = input.search === undefined ? undefined : prefixQuery(input.search)
      const sql = db.sql
      const registries = yield* query("visible registries", () => sql`
        select registry_id, created_at, base_url, sync, last_sync from ${db.table("registries")}
        where (org_id = ${orgOf(invocation)} or org_id is null) and enabled order by registry_id`)
      const key = JSON.stringify([registries.map((r) => registryStamp(r as any)), terms ?? null, input.transport, input.authKind, input.category, input.status, input.registryId, limit, after])
      const cached = cache.get(key) as { servers: ReadonlyArray<CatalogServer>; nextCursor: string | null } | undefined
      if (cached !== undefined) return cached
      const ids = registries.map((r) => r.registry_id as string)
      // the page is found in catalog_latest (search, filters, order), then its rows are read
      const rows = yield* query("browse catalog", () => sql`
        select c.server_id, c.registry_id, c.name, c.version, true as is_latest, c.title, c.description, c.repository, c.website_url, c.icons,
          c.transport_types, c.auth_kind, c.categories, c.status, c.published_at, c.upstream_updated_at, c.status_changed_at
        from (
          select l.server_id, l.name from ${db.table("catalog_latest")} l
          where l.registry_id = any(${ids}::text[])
            ${input.status === undefined ? sql`and l.status <> 'deleted'` : sql`and l.status = ${input.status}`}
            ${terms === undefined ? sql`` : sql`and l.search @@ to_tsquery('simple', ${terms})`}
            ${input.transport === undefined ? sql`` : sql`and l.transport_types ? ${input.transport}`}
            ${input.authKind === undefined ? sql`` : sql`and l.auth_kind = ${input.authKind}`}
            ${input.category === undefined ? sql`` : sql`and l.categories ? ${input.category}`}
            ${input.registryId === undefined ? sql`` : sql`and l.registry_id = ${input.registryId}`}
            ${after === undefined ? sql`` : sql`and (l.name, l.server_id) > (${after[0]}, ${after[1]})`}
          order by l.name, l.server_id
          limit ${limit + 1}
        ) page
        join ${db.table("catalog_servers")} c on c.server_id = page.server_id
        order by page.name, page.server_id`)
      const page = rows.slice(0, limit).map(toServer)
      const last = page[page.length - 1]
      const answer = { servers: page, nextCursor: rows.length > limit ? Schema.encodeSync(BrowseCursor)([last.name, last.serverId]) : null }
      cache.set(key, answer)
      return answer
    })
})

export const getCatalogServer = defineCapability({
  ...reads,
  // reading an old README again records the fresh one; who may do what stays
  mutating: true,
  changesAccess: false,
  name: "plugin.catalog.get",
  description: "Read a catalog server: every field, its packages and remotes, the versions known, and its README as sanitized HTML.",
  input: Schema.Struct({ serverId: ServerId }),
  output: Schema.Struct({
    ...CatalogServer.fields,
    packages: Json,
    remotes: Json,
    meta: Json,
    versions: Schema.Array(Schema.Struct({ serverId: Schema.String, version: Schema.String, isLatest: Schema.Boolean, status: CatalogStatus })),
    readmeHtml: Schema.NullOr(Schema.String),
    readmeFetchedAt: Schema.NullOr(Schema.String)
  }),
  handler: (invocation, { serverId }) =>
    Effect.gen(function* () {
      const db = yield* Db
      const [row] = yield* query("read catalog server", () => db.sql`
        select c.*, (l.version is not null) as is_latest, m.readme_html, m.readme_fetched_at
        from ${db.table("catalog_servers")} c
        join ${db.table("registries")} r on r.registry_id = c.registry_id
        left join ${db.table("catalog_latest")} l on l.registry_id = c.registry_id and l.name = c.name and l.version = c.version
        left join ${db.table("catalog_readmes")} m on m.server_id = c.server_id
        where c.server_id = ${serverId} and (r.org_id = ${orgOf(invocation)} or r.org_id is null)`)
      if (row === undefined) return yield* new NotFound({ reason: "catalog_server_not_found", message: `no catalog server ${serverId} in this organization's registries` })
      const versions = yield* query("catalog server versions", () => db.sql`
        select c.server_id, c.version, c.status, (l.version is not null) as is_latest
        from ${db.table("catalog_servers")} c
        left join ${db.table("catalog_latest")} l on l.registry_id = c.registry_id and l.name = c.name and l.version = c.version
        where c.registry_id = ${row.registry_id} and c.name = ${row.name}
        order by c.published_at desc nulls last, c.version desc`)
      const readme = yield* readmeOf(
        { registryId: row.registry_id, serverId, repository: row.repository },
        { readmeHtml: row.readme_html ?? null, fetchedAt: iso(row.readme_fetched_at) }
      )
      return {
        ...toServer(row),
        packages: row.packages,
        remotes: row.remotes,
        meta: row.meta,
        versions: versions.map((v) => ({ serverId: v.server_id, version: v.version, isLatest: v.is_latest, status: v.status })),
        readmeHtml: readme.readmeHtml,
        readmeFetchedAt: readme.fetchedAt
      }
    })
})

export const pluginCatalogCapabilities: ReadonlyArray<AnyCapability> = [addRegistry, removeRegistry, listRegistries, syncRegistry, browseCatalog, getCatalogServer]
