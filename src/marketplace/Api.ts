/**
 * The marketplace wing's contracts: registries and the catalog (`plugin.registry.*`,
 * `plugin.catalog.*`), the organization's allow-list (`plugin.org.*`), workspace credentials
 * (`plugin.credential.*`, `plugin.oauth.*`) and workspace enablement (`plugin.workspace.*`).
 * Organization Owner and workspace Admin by default (spec 5 rule 12).
 */
import { Schema, Struct } from "effect"
import { Json } from "../../actors/kernel.ts"
import { AuthConfig, AuthKind, HealthStatus, ListingFields, PluginType, Transport } from "../../actors/listing/definition.ts"
import { AuthKind as CatalogAuthKind, CatalogEntry, CatalogStatus, SyncCounts } from "../../actors/registry/events.ts"
import { ActiveSync, LiveRegistry } from "../../actors/registry/state.ts"
import { defineContract, type Role } from "../checkpoint/Capability.ts"
import { PageLimit } from "../platform/Paging.ts"

/** Spec 5 rule 12: Owner and Admin; Members and Viewers are refused. */
export const pluginManagers: ReadonlyArray<Role> = ["org:owner", "workspace:admin"]

const managed = { roles: pluginManagers, claimedBy: "builtin", needsApproval: false, destructive: false } as const
/** What the writes to the path's workspace (enablement, credentials) share; each adds its surfaces and sensitivity. */
export const workspaceWrites = { ...managed, scope: "workspace", mutating: true, changesAccess: false } as const

const common = { ...managed, scope: "organization", surfaces: ["api", "mcp"] } as const
const reads = { ...common, mutating: false, sensitivity: "medium" } as const
const writes = { ...common, mutating: true, changesAccess: false, sensitivity: "medium" } as const

// Registries and the catalog (PluginCatalog.ts)

export const RegistryId = Schema.String.pipe(Schema.pattern(/^mreg_[0-9a-f]{32}$/, { message: () => "must be a registry id (mreg_...)" }))
export const ServerId = Schema.String.pipe(Schema.pattern(/^mcat_[0-9a-f]{32}$/, { message: () => "must be a catalog server id (mcat_...)" }))

/** A registry as callers see it: the registry actor's own fields, its pass's cursor and the sync under way. */
export const Registry = Schema.Struct({
  /** `orgId` null: the global default seed. */
  ...Struct.pick(LiveRegistry.fields, "registryId", "orgId", "name", "baseUrl", "enabled", "isDefaultSeed", "lastSyncedAt"),
  lastSyncedCursor: Schema.NullOr(Schema.String),
  /** The sync under way, if one holds the registry. */
  syncing: Schema.NullOr(Schema.Struct({ ...Struct.pick(ActiveSync.fields, "syncId"), mode: Schema.String, ...Struct.pick(ActiveSync.fields, "startedAt", "counts") })),
  lastSync: LiveRegistry.fields.lastSync
})
export type Registry = typeof Registry.Type

export const addRegistry = defineContract({
  ...writes,
  name: "plugin.registry.add",
  description: "Add an MCP registry (registry API v0.1) to the organization; its servers join the catalog on its next sync. One registry per base URL.",
  input: Schema.Struct({
    name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
    baseUrl: Schema.String.pipe(Schema.maxLength(2000)),
    enabled: Schema.optional(Schema.Boolean)
  }),
  output: Registry
})

export const removeRegistry = defineContract({
  ...writes,
  destructive: true,
  name: "plugin.registry.remove",
  description: "Remove one of the organization's registries; its servers leave the catalog. The default seed cannot be removed.",
  input: Schema.Struct({ registryId: RegistryId }),
  output: Schema.Struct({ registryId: Schema.String, removed: Schema.Literal(true) })
})

export const listRegistries = defineContract({
  ...reads,
  name: "plugin.registry.list",
  description: "List the organization's registries and the global default seed, with each one's sync checkpoint and last sync.",
  input: Schema.Struct({}),
  output: Schema.Struct({ registries: Schema.Array(Registry) })
})

export const syncRegistry = defineContract({
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
  })
})

/** Spec 2.9's repository fields (a registry's other fields are not kept in answers). */
export const Repository = Schema.Struct({
  url: Schema.String,
  source: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  subfolder: Schema.optional(Schema.String)
})

export const Icon = Schema.Struct({
  src: Schema.String,
  mimeType: Schema.optional(Schema.String),
  sizes: Schema.optional(Schema.Array(Schema.String)),
  theme: Schema.optional(Schema.String)
})

/** A catalog entry as stored: with its registry, repository and icons in the answer's shapes, without packages, remotes and meta. */
export const CatalogRow = Schema.Struct({
  ...Struct.omit(CatalogEntry.fields, "packages", "remotes", "meta"),
  registryId: Schema.String,
  repository: Schema.NullOr(Repository),
  icons: Schema.Array(Icon)
})
export type CatalogRow = typeof CatalogRow.Type

/** A catalog entry as callers see it: the row, and whether the operator's denylist refuses it (with the reason the marketplace shows). */
export const CatalogServer = Schema.Struct({
  ...CatalogRow.fields,
  denylisted: Schema.NullOr(Schema.Struct({ reason: Schema.String }))
})
export type CatalogServer = typeof CatalogServer.Type

export const browseCatalog = defineContract({
  ...reads,
  name: "plugin.catalog.browse",
  description:
    "Browse the catalog of MCP servers from the organization's registries and the default seed: each server's latest version, searched over name, title and description (word prefixes), filtered by transport, auth kind, category and status (deleted ones only when asked), in pages; pluginType capability lists the capability packs instead.",
  input: Schema.Struct({
    search: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
    transport: Schema.optional(Schema.String),
    authKind: Schema.optional(CatalogAuthKind),
    category: Schema.optional(Schema.String),
    status: Schema.optional(CatalogStatus),
    registryId: Schema.optional(RegistryId),
    pluginType: Schema.optional(PluginType),
    limit: Schema.optional(PageLimit),
    cursor: Schema.optional(Schema.String)
  }),
  output: Schema.Struct({ servers: Schema.Array(CatalogServer), nextCursor: Schema.NullOr(Schema.String) })
})

/** A version of a catalog server, as `plugin.catalog.get` lists them. */
export const CatalogVersion = Schema.Struct({ serverId: Schema.String, version: Schema.String, isLatest: Schema.Boolean, status: CatalogStatus })
export type CatalogVersion = typeof CatalogVersion.Type

export const getCatalogServer = defineContract({
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
    versions: Schema.Array(CatalogVersion),
    readmeHtml: Schema.NullOr(Schema.String),
    readmeFetchedAt: Schema.NullOr(Schema.String)
  })
})

// The organization's allow-list (PluginListings.ts)

export const ListingId = Schema.String.pipe(Schema.pattern(/^porg_[0-9a-f]{32}$/, { message: () => "must be a listing id (porg_...)" }))
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
  /** `detectedAt` is the platform's to set (OAuth found at connect time), not an admin's; a URL variable is a catalog remote's declaration. */
  authConfig: Schema.optional(AuthConfig.pipe(Schema.omit("detectedAt", "urlVariable"))),
  config: Schema.optional(Config)
})

/** A capability pack of the pack registry (source `svc`), by its plugin id. */
const PackInstall = Schema.Struct({
  pluginId: Schema.String.pipe(Schema.pattern(/^svc\/[a-z0-9-]{1,100}$/, { message: () => "must be a capability pack id (svc/<slug>)" }))
})

export const InstallInput = Schema.Union(CatalogInstall, CustomInstall, PackInstall)
export type InstallInput = typeof InstallInput.Type

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

export const installListing = defineContract({
  ...writes,
  name: "plugin.org.install",
  description:
    "Add an MCP server to the organization's allow-list, disabled: a catalog server by its id (catalogServerId), a custom server by its endpoint URL and transport (streamable-http or sse) with its auth kind (none, secret or oauth), or a capability pack by its plugin id (pluginId, e.g. svc/documents; installing it again changes nothing).",
  input: InstallInput,
  output: Listing
})

/** What a bulk install reports per item, in the order given. */
export const BulkItem = Schema.Union(
  Schema.Struct({ index: Schema.Int, ok: Schema.Literal(true), listing: Listing }),
  Schema.Struct({
    index: Schema.Int,
    ok: Schema.Literal(false),
    error: Schema.Struct({ status: Schema.Int, code: Schema.String, reason: Schema.NullOr(Schema.String), message: Schema.String })
  })
)
export type BulkItem = typeof BulkItem.Type

/** Items of one bulk install, at most. */
const MAX_BULK_ITEMS = 50

export const installListings = defineContract({
  ...writes,
  name: "plugin.org.install_bulk",
  description:
    "Install several servers at once; each item is installed whole or not at all, and reported on its own (its listing, or its error as the single install would answer it).",
  input: Schema.Struct({ items: Schema.Array(InstallInput).pipe(Schema.minItems(1), Schema.maxItems(MAX_BULK_ITEMS)) }),
  output: Schema.Struct({ results: Schema.Array(BulkItem), installed: Schema.Int, failed: Schema.Int })
})

const ListingRef = Schema.Struct({ listingId: ListingId })

export const setListingEnabled = defineContract({
  ...writes,
  name: "plugin.org.set_enabled",
  description: "Enable or disable a listing of the organization's allow-list; workspaces may enable only an enabled listing.",
  input: Schema.Struct({ listingId: ListingId, enabled: Schema.Boolean }),
  output: Listing
})

export const uninstallListing = defineContract({
  ...writes,
  name: "plugin.org.uninstall",
  description: "Remove a listing from the organization's allow-list (a soft delete: it is kept as a record); every workspace stops using it.",
  destructive: true,
  input: ListingRef,
  output: Listing
})

/** A credential's state in a list: never a secret. */
const CredentialState = Schema.Struct({
  status: Schema.Literal("active", "needs_reauth", "revoked"),
  expiresAt: Schema.NullOr(Schema.String),
  lastRefreshedAt: Schema.NullOr(Schema.String),
  updatedAt: Schema.String
})

/** A listing as `plugin.org.list` shows it: with the path's workspace's install and credential. */
export const ListedListing = Schema.Struct({
  ...Listing.fields,
  workspace: Schema.NullOr(
    Schema.Struct({ enabled: Schema.Boolean, healthStatus: Schema.String, lastHealthCheckAt: Schema.NullOr(Schema.String), healthError: Schema.NullOr(Schema.String) })
  ),
  /** The path's workspace's credential for it (spec 2.9), null until a secret is entered or OAuth connected. */
  credential: Schema.NullOr(CredentialState),
  /** The organization's shared credential for it, used where the workspace has none of its own. */
  sharedCredential: Schema.NullOr(CredentialState)
})
export type ListedListing = typeof ListedListing.Type

export const listListings = defineContract({
  ...reads,
  name: "plugin.org.list",
  description:
    "List the organization's allow-list in pages ordered by id, with whether the path's workspace enabled each, the state of its credential there and of the organization's shared one (never a secret); filters: pluginType, enabled; includeDeleted shows uninstalled listings too.",
  input: Schema.Struct({
    pluginType: Schema.optional(PluginType),
    enabled: Schema.optional(Schema.Boolean),
    includeDeleted: Schema.optional(Schema.Boolean),
    limit: Schema.optional(PageLimit),
    cursor: Schema.optional(Schema.String)
  }),
  output: Schema.Struct({ listings: Schema.Array(ListedListing), nextCursor: Schema.NullOr(Schema.String) })
})

// Workspace credentials (PluginCredentials.ts)

export const credentialCommon = { ...workspaceWrites, sensitivity: "high" } as const

/** A credential as callers see it: its state, never a secret. */
export const Credential = Schema.Struct({
  credentialId: Schema.String,
  listingId: Schema.String,
  workspaceId: Schema.String,
  authKind: Schema.Literal("oauth", "secret"),
  status: Schema.NullOr(Schema.Literal("active", "needs_reauth", "revoked")),
  scopes: Schema.Array(Schema.String),
  expiresAt: Schema.NullOr(Schema.String),
  lastRefreshedAt: Schema.NullOr(Schema.String),
  oauthClientId: Schema.NullOr(Schema.String),
  updatedAt: Schema.String
})
export type Credential = typeof Credential.Type

export const setSecret = defineContract({
  ...credentialCommon,
  surfaces: ["api", "mcp"],
  name: "plugin.credential.set_secret",
  description:
    "Store the API key or header secret of an allow-listed server whose auth kind is secret, for this workspace; it is encrypted at rest and sent in the listing's declared header when connecting. Replaces any secret stored before.",
  input: Schema.Struct({ listingId: ListingId, secret: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(8192)) }),
  output: Credential
})

export const setSharedSecret = defineContract({
  ...writes,
  sensitivity: "high",
  name: "plugin.credential.set_shared_secret",
  description:
    "Store the API key or header secret of an allow-listed server whose auth kind is secret once for every workspace of the organization; a workspace's own secret (plugin.credential.set_secret) wins over it. Encrypted at rest; replaces any shared secret stored before.",
  input: Schema.Struct({ listingId: ListingId, secret: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(8192)) }),
  output: Credential
})

const AuthorizationStarted = Schema.Struct({
  credentialId: Schema.String,
  /** Where to send the person: the authorization server's page, with PKCE S256 and the state. */
  authorizationUrl: Schema.String,
  /** The callback must come before then (single use). */
  expiresAt: Schema.String
})

const ClientId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500))

/** The admin's client credentials are used when the authorization server offers no registration, or refuses it. */
const StartOAuthInput = Schema.Struct({
  listingId: ListingId,
  clientId: Schema.optional(ClientId),
  clientSecret: Schema.optional(Schema.String.pipe(Schema.maxLength(2000)))
})

export const startOAuth = defineContract({
  ...credentialCommon,
  // the state is bound to the person who starts it: a person, on the API only (spec 4.5)
  surfaces: ["api"],
  requiresPerson: true,
  name: "plugin.oauth.start",
  description:
    "Begin connecting an allow-listed OAuth server for this workspace: discovers its authorization server, uses the stored client, else registers one, else (registration not offered or refused) the clientId and clientSecret given, and returns the URL to send the person to.",
  input: StartOAuthInput,
  output: AuthorizationStarted
})

export const startSharedOAuth = defineContract({
  ...writes,
  sensitivity: "high",
  // as plugin.oauth.start: the state is bound to the person who starts it
  surfaces: ["api"],
  requiresPerson: true,
  name: "plugin.oauth.start_shared",
  description:
    "Begin connecting an allow-listed OAuth server once for every workspace of the organization, as plugin.oauth.start does for one; a workspace's own connection wins over it. Starting it again re-authenticates with the stored client.",
  input: StartOAuthInput,
  output: AuthorizationStarted
})

export const reauthenticate = defineContract({
  ...credentialCommon,
  surfaces: ["api", "mcp"],
  requiresPerson: true,
  name: "plugin.credential.reauth",
  description:
    "Re-authenticate this workspace's OAuth connection to an allow-listed server (after needs_reauth, or at will): restarts at authorization with the stored client id and returns the URL to send the person to.",
  input: Schema.Struct({ listingId: ListingId }),
  output: AuthorizationStarted
})

export const oauthCallback = defineContract({
  ...credentialCommon,
  scope: "principal",
  roles: ["person"],
  surfaces: ["api"],
  requiresPerson: true,
  name: "plugin.oauth.callback",
  description:
    "Where the authorization server sends the person back (GET /api/v1/plugins/oauth/callback?code&state): the state is used once, by the person who started it, within 10 minutes; the code is exchanged and the tokens stored encrypted.",
  input: Schema.Struct({
    state: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
    code: Schema.optional(Schema.String.pipe(Schema.maxLength(4000))),
    error: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
    error_description: Schema.optional(Schema.String.pipe(Schema.maxLength(2000))),
    iss: Schema.optional(Schema.String.pipe(Schema.maxLength(2000)))
  }),
  output: Schema.Struct({ ...Credential.fields, appRoute: Schema.String })
})

// Workspace enablement (PluginWorkspace.ts)

const workspaceCommon = { ...workspaceWrites, surfaces: ["api", "mcp"], sensitivity: "medium" } as const

export const WorkspaceInstall = Schema.Struct({
  listingId: Schema.String,
  workspaceId: Schema.String,
  enabled: Schema.Boolean,
  healthStatus: HealthStatus,
  lastHealthCheckAt: Schema.NullOr(Schema.String),
  healthError: Schema.NullOr(Schema.String),
  tools: Schema.Array(Schema.String)
})
export type WorkspaceInstall = typeof WorkspaceInstall.Type

export const setWorkspaceEnabled = defineContract({
  ...workspaceCommon,
  name: "plugin.workspace.set_enabled",
  description:
    "Enable or disable an MCP server of the organization's allow-list in this workspace. Enabling needs the listing enabled for the organization, connects to the server and records its health and tools.",
  input: Schema.Struct({ listingId: ListingId, enabled: Schema.Boolean }),
  output: WorkspaceInstall
})

export const checkWorkspaceHealth = defineContract({
  ...workspaceCommon,
  name: "plugin.workspace.check_health",
  description: "Connect to an MCP server enabled in this workspace, list its tools, and record its health (health_status, last_health_check_at).",
  input: Schema.Struct({ listingId: ListingId }),
  output: WorkspaceInstall
})
