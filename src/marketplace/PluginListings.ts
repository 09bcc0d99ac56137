/**
 * The organization allow-list (spec 2.9, 3.5, 4.5) as capabilities on the API
 * (`/v1/{org}/{ws}/plugin/org/...`) and MCP: `plugin.org.install/install_bulk/uninstall/set_enabled/list`.
 * Each listing is an actor keyed by a digest of (organization, plugin type, name), so whether a name
 * is taken is one actor's decision. Organization Owner and workspace Admin only (spec 5 rule 12).
 */
import { Cause, Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import { ListingActor } from "../../actors/listing/actor.ts"
import { AuthConfig, AuthKind, type AuthKind as AuthKindType, ListingFields, PluginType, Transport, type Transport as TransportType } from "../../actors/listing/definition.ts"
import { InstallListing, SetListingEnabled, UninstallListing } from "../../actors/listing/protocol.ts"
import type { ListingState } from "../../actors/listing/state.ts"
import { Json } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { Db, query } from "../../streams/Db.ts"
import { type AnyCapability, defineCapability, type Invocation, type Role } from "../checkpoint/Capability.ts"
import { BadRequest, Forbidden, NotFound } from "../platform/Errors.ts"
import { FailureDescriber } from "../platform/Failures.ts"
import { deniedBy, PluginSettings } from "./PluginSettings.ts"
import { Entitlements } from "../packs/Entitlement.ts"
import { Packs } from "../packs/Registry.ts"
import { idCursor, keysetPage, PageLimit } from "../platform/Paging.ts"

/** Spec 5 rule 12: Owner and Admin; Members and Viewers are refused. */
export const pluginManagers: ReadonlyArray<Role> = ["org:owner", "workspace:admin"]

const managed = { roles: pluginManagers, claimedBy: "builtin", needsApproval: false, destructive: false } as const
/** What the writes to the path's workspace (enablement, credentials) share; each adds its surfaces and sensitivity. */
export const workspaceWrites = { ...managed, scope: "workspace", mutating: true, changesAccess: false } as const

const common = { ...managed, scope: "organization", surfaces: ["api", "mcp"] } as const
const reads = { ...common, mutating: false, sensitivity: "medium" } as const
const writes = { ...common, mutating: true, changesAccess: false, sensitivity: "medium" } as const

const orgOf = (invocation: Invocation) => invocation.orgId!
const iso = (value: Date | string | null): string | null => (value instanceof Date ? value.toISOString() : value)

/** A listing's id: a digest of what makes it unique, so installing a name twice reaches the same actor. */
export const listingIdOf = (orgId: string, pluginType: string, name: string) =>
  `porg_${createHash("sha256").update(`${orgId}\u0000${pluginType}\u0000${name}`).digest("hex").slice(0, 32)}`

export const ListingId = Schema.String.pipe(Schema.pattern(/^porg_[0-9a-f]{32}$/, { message: () => "must be a listing id (porg_...)" }))
const ServerId = Schema.String.pipe(Schema.pattern(/^mcat_[0-9a-f]{32}$/, { message: () => "must be a catalog server id (mcat_...)" }))
const HttpUrl = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((value) => URL.canParse(value) && ["http:", "https:"].includes(new URL(value).protocol), { message: () => "must be an http(s) URL" })
)
const Config = Schema.Record({ key: Schema.String, value: Json })

/** A server of the catalog of a registry the organization sees. */
const CatalogInstall = Schema.Struct({ catalogServerId: ServerId, config: Schema.optional(Config) })

/** A server an admin names by its endpoint (source `custom`). */
const CustomInstall = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  title: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  description: Schema.optional(Schema.String.pipe(Schema.maxLength(2000))),
  iconUrl: Schema.optional(HttpUrl),
  endpointUrl: HttpUrl,
  transport: Transport,
  pluginType: Schema.optional(Schema.Literal("mcp_server", "integration", "content_tool")),
  /** Default `none`. */
  authKind: Schema.optional(AuthKind),
  /** `detectedAt` is the platform's to set (OAuth found at connect time), not an admin's. */
  authConfig: Schema.optional(AuthConfig.pipe(Schema.omit("detectedAt"))),
  config: Schema.optional(Config)
})

/** A capability pack of the pack registry (source `svc`), by its plugin id. */
const PackInstall = Schema.Struct({
  pluginId: Schema.String.pipe(Schema.pattern(/^svc\/[a-z0-9-]{1,100}$/, { message: () => "must be a capability pack id (svc/<slug>)" }))
})

const InstallInput = Schema.Union(CatalogInstall, CustomInstall, PackInstall)
type InstallInput = typeof InstallInput.Type

export const Listing = Schema.Struct({
  listingId: Schema.String,
  ...ListingFields,
  enabled: Schema.Boolean,
  createdAt: Schema.String,
  updatedAt: Schema.String,
  /** The soft-delete marker: set once uninstalled. */
  deletedAt: Schema.NullOr(Schema.String)
})
export type Listing = typeof Listing.Type

export const listingOfState = (state: ListingState): Listing => {
  if (state._tag !== "Live") throw new Error("a listing command succeeded without a listing")
  const { _tag, orgId, workspaces, ...listing } = state
  return listing
}

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

interface RemoteHeader {
  readonly name: string
  readonly isSecret?: boolean
  readonly value?: string
}
interface Remote {
  readonly type: string
  readonly url: string
  readonly headers?: ReadonlyArray<RemoteHeader>
}

/** The remote the platform connects to: Streamable HTTP first, else SSE (a package runs locally, not here). */
const remoteOf = (remotes: ReadonlyArray<Remote>): (Remote & { readonly type: TransportType }) | undefined =>
  (remotes.find((r) => r.type === "streamable-http") ?? remotes.find((r) => r.type === "sse")) as (Remote & { readonly type: TransportType }) | undefined

/** A secret with no header declared goes as a bearer token. */
const BEARER: AuthConfig = { header: "Authorization", valuePrefix: "Bearer " }

/** Where a secret goes: the remote's first header flagged `isSecret` (a value like `Bearer {token}` gives its prefix), else a bearer token. */
const secretHeaderOf = (remote: Remote): AuthConfig => {
  const header = remote.headers?.find((h) => h.isSecret === true)
  if (header === undefined) return BEARER
  const placeholder = header.value?.indexOf("{") ?? -1
  return { header: header.name, valuePrefix: placeholder > 0 ? header.value!.slice(0, placeholder) : "" }
}

/** The catalog server's version, when its registry is one the organization sees. */
const readCatalogServer = (orgId: string, serverId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("catalog server for install", () => db.sql`
      select c.* from ${db.table("catalog_servers")} c join ${db.table("registries")} r using (registry_id)
      where c.server_id = ${serverId} and (r.org_id is null or r.org_id = ${orgId}) and c.status <> 'deleted'`)
    return row === undefined
      ? yield* new NotFound({ reason: "catalog_server_not_found", message: `no catalog server ${serverId} in the registries this organization sees` })
      : row
  })

/** The listing an install asks for (before the denylist and the name's actor decide). */
const listingToInstall = (orgId: string, input: InstallInput) =>
  Effect.gen(function* () {
    if ("pluginId" in input) {
      const pack = (yield* Packs).byId.get(input.pluginId)
      if (pack === undefined) return yield* new BadRequest({ reason: "unknown_plugin", message: `no capability pack ${input.pluginId}; plugin.catalog.browse with pluginType capability lists them` })
      return {
        pluginType: "capability" as const,
        catalogServerId: null,
        source: "svc" as const,
        name: pack.id,
        title: pack.name,
        description: pack.description,
        iconUrl: pack.icon ?? null,
        endpointUrl: null,
        transport: null,
        authKind: "none" as const,
        authConfig: {},
        config: {}
      }
    }
    if ("catalogServerId" in input) {
      const server = yield* readCatalogServer(orgId, input.catalogServerId)
      const remote = remoteOf(server.remotes as ReadonlyArray<Remote>)
      if (remote === undefined) {
        return yield* new BadRequest({ reason: "no_remote", message: `${server.name} offers no Streamable HTTP or SSE remote; only remote servers can be connected` })
      }
      const authKind = server.auth_kind as AuthKindType
      return {
        pluginType: "mcp_server" as const,
        catalogServerId: input.catalogServerId,
        source: "registry" as const,
        name: server.name as string,
        title: server.title as string | null,
        description: server.description as string,
        iconUrl: (server.icons as ReadonlyArray<{ readonly src: string }>)[0]?.src ?? null,
        endpointUrl: remote.url,
        transport: remote.type,
        authKind,
        authConfig: authKind === "secret" ? secretHeaderOf(remote) : {},
        config: input.config ?? {}
      }
    }
    const authKind = input.authKind ?? "none"
    return {
      pluginType: input.pluginType ?? ("mcp_server" as const),
      catalogServerId: null,
      source: "custom" as const,
      name: input.name,
      title: input.title ?? null,
      description: input.description ?? "",
      iconUrl: input.iconUrl ?? null,
      endpointUrl: input.endpointUrl,
      transport: input.transport,
      authKind,
      // a secret goes as a bearer token unless the admin names another header (sent as is, unless a prefix is named too)
      authConfig: authKind !== "secret" ? (input.authConfig ?? {}) : input.authConfig?.header === undefined ? { ...input.authConfig, ...BEARER } : { valuePrefix: "", ...input.authConfig },
      config: input.config ?? {}
    }
  })

const install = (invocation: Invocation, input: InstallInput, meta: Invocation["meta"]) =>
  Effect.gen(function* () {
    const orgId = orgOf(invocation)
    const listing = yield* listingToInstall(orgId, input)
    const denied = deniedBy((yield* PluginSettings).denylist, listing.name)
    if (denied !== undefined) {
      return yield* new Forbidden({ reason: "plugin_denylisted", message: `${listing.name} may not be installed: the operator denies it (${denied})` })
    }
    const listingId = listingIdOf(orgId, listing.pluginType, listing.name)
    const host = yield* ActorHost
    const { state } = yield* host.send(ListingActor, listingId, new InstallListing({ listingId, orgId, ...listing }), meta)
    ;(yield* Entitlements).drop(orgId)
    return listingOfState(state)
  })

export const installListing = defineCapability({
  ...writes,
  name: "plugin.org.install",
  description:
    "Add an MCP server to the organization's allow-list, disabled: a catalog server by its id (catalogServerId), a custom server by its endpoint URL and transport (streamable-http or sse) with its auth kind (none, secret or oauth), or a capability pack by its plugin id (pluginId, e.g. svc/documents; installing it again changes nothing).",
  input: InstallInput,
  output: Listing,
  handler: (invocation, input) => install(invocation, input, invocation.meta)
})

/** What a bulk install reports per item, in the order given. */
const BulkItem = Schema.Union(
  Schema.Struct({ index: Schema.Int, ok: Schema.Literal(true), listing: Listing }),
  Schema.Struct({
    index: Schema.Int,
    ok: Schema.Literal(false),
    error: Schema.Struct({ status: Schema.Int, code: Schema.String, reason: Schema.NullOr(Schema.String), message: Schema.String })
  })
)

/** Items of one bulk install, at most. */
const MAX_BULK_ITEMS = 50

export const installListings = defineCapability({
  ...writes,
  name: "plugin.org.install_bulk",
  description:
    "Install several servers at once; each item is installed whole or not at all, and reported on its own (its listing, or its error as the single install would answer it).",
  input: Schema.Struct({ items: Schema.Array(InstallInput).pipe(Schema.minItems(1), Schema.maxItems(MAX_BULK_ITEMS)) }),
  output: Schema.Struct({ results: Schema.Array(BulkItem), installed: Schema.Int, failed: Schema.Int }),
  handler: (invocation, { items }) =>
    Effect.gen(function* () {
      const describe = yield* FailureDescriber
      const results = yield* Effect.forEach(
        items,
        (item, index) =>
          // each item is its own command: a retry of the whole call decides each item once
          install(invocation, item, { ...invocation.meta, commandId: `${invocation.meta.commandId}:${index}` }).pipe(
            Effect.map((listing): typeof BulkItem.Type => ({ index, ok: true, listing })),
            Effect.catchAll((error) => {
              const { status, code, reason, message } = describe(Cause.fail(error))
              // a 5xx is the platform's failure, not the item's: the whole call fails and may be retried
              return status >= 500 ? Effect.fail(error) : Effect.succeed<typeof BulkItem.Type>({ index, ok: false, error: { status, code, reason: reason ?? null, message } })
            })
          ),
        { concurrency: 8 }
      )
      const installed = results.filter((r) => r.ok).length
      return { results, installed, failed: results.length - installed }
    })
})

const ListingRef = Schema.Struct({ listingId: ListingId })

/** A change of a listing; this node's entitlement cache forgets the organization (a pack may have changed). */
const sendToListing = <C extends { readonly _tag: string }>(invocation: Invocation, listingId: string, command: C) =>
  Effect.flatMap(ActorHost, (host) => host.send(ListingActor, listingId, command as never, invocation.meta)).pipe(
    Effect.tap(() => Effect.map(Entitlements, (entitlements) => entitlements.drop(orgOf(invocation))))
  )

export const setListingEnabled = defineCapability({
  ...writes,
  name: "plugin.org.set_enabled",
  description: "Enable or disable a listing of the organization's allow-list; workspaces may enable only an enabled listing.",
  input: Schema.Struct({ listingId: ListingId, enabled: Schema.Boolean }),
  output: Listing,
  handler: (invocation, { listingId, enabled }) =>
    Effect.map(sendToListing(invocation, listingId, new SetListingEnabled({ listingId, orgId: orgOf(invocation), enabled })), ({ state }) =>
      listingOfState(state)
    )
})

export const uninstallListing = defineCapability({
  ...writes,
  name: "plugin.org.uninstall",
  description: "Remove a listing from the organization's allow-list (a soft delete: it is kept as a record); every workspace stops using it.",
  destructive: true,
  input: ListingRef,
  output: Listing,
  handler: (invocation, { listingId }) =>
    Effect.map(sendToListing(invocation, listingId, new UninstallListing({ listingId, orgId: orgOf(invocation) })), ({ state }) => listingOfState(state))
})

/** An opaque position: the base64url of the last listing id of the previous page. */
const Cursor = idCursor(ListingId)

export const listListings = defineCapability({
  ...reads,
  name: "plugin.org.list",
  description:
    "List the organization's allow-list in pages ordered by id, with whether the path's workspace enabled each and the state of its credential there (never a secret); filters: pluginType, enabled; includeDeleted shows uninstalled listings too.",
  input: Schema.Struct({
    pluginType: Schema.optional(PluginType),
    enabled: Schema.optional(Schema.Boolean),
    includeDeleted: Schema.optional(Schema.Boolean),
    limit: Schema.optional(PageLimit),
    cursor: Schema.optional(Schema.String)
  }),
  output: Schema.Struct({
    listings: Schema.Array(
      Schema.Struct({
        ...Listing.fields,
        workspace: Schema.NullOr(
          Schema.Struct({ enabled: Schema.Boolean, healthStatus: Schema.String, lastHealthCheckAt: Schema.NullOr(Schema.String), healthError: Schema.NullOr(Schema.String) })
        ),
        /** The path's workspace's credential for it (spec 2.9), null until a secret is entered or OAuth connected. */
        credential: Schema.NullOr(
          Schema.Struct({
            status: Schema.Literal("active", "needs_reauth", "revoked"),
            expiresAt: Schema.NullOr(Schema.String),
            lastRefreshedAt: Schema.NullOr(Schema.String),
            updatedAt: Schema.String
          })
        )
      })
    ),
    nextCursor: Schema.NullOr(Schema.String)
  }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const db = yield* Db
      const read = (after: string | undefined, rows: number) => query("list listings", () => db.sql`
        select l.*, w.enabled as ws_enabled, w.health_status, w.last_health_check_at, w.health_error,
          c.status as credential_status, c.expires_at as credential_expires_at, c.last_refreshed_at as credential_refreshed_at, c.updated_at as credential_updated_at
        from ${db.table("plugin_listings")} l
        left join ${db.table("plugin_workspace_installs")} w on w.listing_id = l.listing_id and w.workspace_id = ${invocation.workspaceId}
        left join ${db.table("plugin_credentials")} c on c.listing_id = l.listing_id and c.workspace_id = ${invocation.workspaceId}
        where l.org_id = ${orgOf(invocation)}
          ${input.includeDeleted === true ? db.sql`` : db.sql`and l.deleted_at is null`}
          ${input.pluginType === undefined ? db.sql`` : db.sql`and l.plugin_type = ${input.pluginType}`}
          ${input.enabled === undefined ? db.sql`` : db.sql`and l.enabled = ${input.enabled}`}
          ${after === undefined ? db.sql`` : db.sql`and l.listing_id > ${after}`}
        order by l.listing_id limit ${rows}`)
      const { page, nextCursor } = yield* keysetPage(Cursor, input, read, (last) => last.listing_id as string)
      const listings = page.map((row) => ({
        ...toListing(row),
        workspace:
          row.ws_enabled === null
            ? null
            : { enabled: row.ws_enabled, healthStatus: row.health_status, lastHealthCheckAt: iso(row.last_health_check_at), healthError: row.health_error },
        credential:
          row.credential_status === null
            ? null
            : {
                status: row.credential_status,
                expiresAt: iso(row.credential_expires_at),
                lastRefreshedAt: iso(row.credential_refreshed_at),
                updatedAt: iso(row.credential_updated_at)!
              }
      }))
      return { listings, nextCursor }
    })
})

/** A listing of the organization as the read model holds it (uninstalled ones are not found). */
export const readListing = (orgId: string, listingId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("read listing", () => db.sql`
      select * from ${db.table("plugin_listings")} where listing_id = ${listingId} and org_id = ${orgId} and deleted_at is null`)
    return row === undefined ? yield* new NotFound({ reason: "listing_not_found", message: `no listing ${listingId} in this organization` }) : toListing(row)
  })

export const pluginListingCapabilities: ReadonlyArray<AnyCapability> = [installListing, installListings, setListingEnabled, uninstallListing, listListings]
