/**
 * The marketplace's registries and catalog (spec 2.9, 4.5, 6.3.3, 6.3.4) as capabilities on the API
 * (`/v1/{org}/{ws}/plugin/...`) and MCP: `plugin.registry.add/remove/list/sync`,
 * `plugin.catalog.browse/get`. Organization Owner and workspace Admin by default (spec 5 rule 12).
 * Registries are the organization's own plus the global default seed.
 */
import { Effect, Fiber, Schema } from "effect"
import { RegistryActor } from "../../actors/registry/actor.ts"
import { AddRegistry, RemoveRegistry } from "../../actors/registry/protocol.ts"
import type { LiveRegistry } from "../../actors/registry/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { BadRequest, NotFound } from "../platform/Errors.ts"
import { CatalogCache, registryStamp } from "./CatalogCache.ts"
import { readmeOf } from "./CatalogReadme.ts"
import { normalizeBaseUrl, orgRegistryId } from "./RegistrySettings.ts"
import { RegistrySyncs } from "./RegistrySchedule.ts"
import { drivePages, startSync } from "./RegistrySync.ts"
import { denialOf } from "./PluginSettings.ts"
import { type PackManifest, Packs } from "../packs/Registry.ts"
import { decodeCursor } from "../platform/Paging.ts"
import * as Api from "./Api.ts"
import { catalogPage, catalogServerVersions, enabledRegistriesOf, readCatalogServer, readRegistry, registriesOf } from "./Queries.ts"

const orgOf = (invocation: Invocation) => invocation.orgId!

const fromState = (r: LiveRegistry): Api.Registry => ({
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
  Effect.flatMap(readRegistry(orgId, registryId), (registry) => (registry === undefined ? Effect.fail(registryNotFound(registryId)) : Effect.succeed(registry)))

export const addRegistry = implement(Api.addRegistry, (invocation, input) =>
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
)

export const removeRegistry = implement(Api.removeRegistry, (invocation, { registryId }) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    yield* host.send(RegistryActor, registryId, new RemoveRegistry({ registryId, orgId: orgOf(invocation) }), invocation.meta)
    return { registryId, removed: true as const }
  })
)

export const listRegistries = implement(Api.listRegistries, (invocation) =>
  Effect.map(registriesOf(orgOf(invocation)), (registries) => ({ registries }))
)

export const syncRegistry = implement(Api.syncRegistry, (invocation, input) =>
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
)

/** Each word of a search, as a prefix of a word of the name, title or description (all must match). */
const prefixQuery = (search: string): string | undefined => {
  const words = search.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w !== "")
  return words.length === 0 ? undefined : words.map((w) => `${w}:*`).join(" & ")
}

/** An opaque position: the base64url of the last row's name and id. */
const BrowseCursor = Schema.compose(Schema.StringFromBase64Url, Schema.parseJson(Schema.Tuple(Schema.String, Api.ServerId)))

/** The registry id packs carry in catalog answers: they come from the pack registry, not a registry of servers. */
const PACK_REGISTRY_ID = "svc"

/**
 * Spec 4.5: the pack registry as catalog entries (auth kind `none`, no transports, the pack's
 * category), without `hidden` and `preview` packs, filtered as servers are; one page (a handful).
 */
export const browsePacks = (
  packs: ReadonlyArray<PackManifest>,
  input: { readonly search?: string | undefined; readonly transport?: string | undefined; readonly authKind?: string | undefined; readonly category?: string | undefined; readonly status?: string | undefined; readonly registryId?: string | undefined }
): ReadonlyArray<Api.CatalogRow> => {
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

/** The rows as callers see them: each marked when the operator's denylist refuses its name. */
const withDenials = (rows: ReadonlyArray<Api.CatalogRow>) =>
  Effect.forEach(rows, (row) => Effect.map(denialOf(row.name), (denylisted): Api.CatalogServer => ({ ...row, denylisted })))

export const browseCatalog = implement(Api.browseCatalog, (invocation, input) =>
  Effect.gen(function* () {
    if (input.pluginType === "capability") return { servers: yield* withDenials(browsePacks((yield* Packs).packs, input)), nextCursor: null }
    // the registries list MCP servers only
    if (input.pluginType !== undefined && input.pluginType !== "mcp_server") return { servers: [], nextCursor: null }
    const cache = yield* CatalogCache
    const limit = input.limit ?? 20
    const after = yield* decodeCursor(BrowseCursor, input.cursor)
    const terms = input.search === undefined ? undefined : prefixQuery(input.search)
    const registries = yield* enabledRegistriesOf(orgOf(invocation))
    const key = JSON.stringify([registries.map((r) => registryStamp(r)), terms ?? null, input.transport, input.authKind, input.category, input.status, input.registryId, limit, after])
    const cached = cache.get(key) as { servers: ReadonlyArray<Api.CatalogServer>; nextCursor: string | null } | undefined
    if (cached !== undefined) return cached
    const ids = registries.map((r) => r.registry_id)
    const rows = yield* catalogPage(ids, { ...input, terms }, after, limit + 1)
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    const answer = { servers: yield* withDenials(page), nextCursor: rows.length > limit ? Schema.encodeSync(BrowseCursor)([last.name, last.serverId]) : null }
    cache.set(key, answer)
    return answer
  })
)

export const getCatalogServer = implement(Api.getCatalogServer, (invocation, { serverId }) =>
  Effect.gen(function* () {
    const found = yield* readCatalogServer(orgOf(invocation), serverId)
    if (found === undefined) return yield* new NotFound({ reason: "catalog_server_not_found", message: `no catalog server ${serverId} in this organization's registries` })
    const { server } = found
    const versions = yield* catalogServerVersions(server.registryId, server.name)
    const readme = yield* readmeOf(
      { registryId: server.registryId, serverId, repository: found.repository },
      { readmeHtml: found.readmeHtml, fetchedAt: found.readmeFetchedAt }
    )
    return {
      ...server,
      denylisted: yield* denialOf(server.name),
      packages: found.packages,
      remotes: found.remotes,
      meta: found.meta,
      versions,
      readmeHtml: readme.readmeHtml,
      readmeFetchedAt: readme.fetchedAt
    }
  })
)

export const pluginCatalogCapabilities: ReadonlyArray<AnyCapability> = [addRegistry, removeRegistry, listRegistries, syncRegistry, browseCatalog, getCatalogServer]
