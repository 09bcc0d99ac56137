/**
 * The organization allow-list (spec 2.9, 3.5, 4.5) as capabilities on the API
 * (`/v1/{org}/{ws}/plugin/org/...`) and MCP: `plugin.org.install/install_bulk/uninstall/set_enabled/list`.
 * Each listing is an actor keyed by a digest of (organization, plugin type, name), so whether a name
 * is taken is one actor's decision. Organization Owner and workspace Admin only (spec 5 rule 12).
 */
import { Cause, Effect } from "effect"
import { createHash } from "node:crypto"
import { ListingActor } from "../../actors/listing/actor.ts"
import type { AuthConfig, Transport as TransportType } from "../../actors/listing/definition.ts"
import { InstallListing, SetListingEnabled, UninstallListing } from "../../actors/listing/protocol.ts"
import type { ListingState } from "../../actors/listing/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { BadRequest, NotFound } from "../platform/Errors.ts"
import { FailureDescriber } from "../platform/Failures.ts"
import { refuseDenylisted } from "./PluginSettings.ts"
import { Entitlements } from "../packs/Entitlement.ts"
import { Packs } from "../packs/Registry.ts"
import { idCursor, keysetPage } from "../platform/Paging.ts"
import * as Api from "./Api.ts"
import { packageSecretNames, remoteAuthKindOf, remoteVariablesByName } from "./CatalogEntry.ts"
import { installableServer, listingsAfter, readListing as listingRow } from "./Queries.ts"

const orgOf = (invocation: Invocation) => invocation.orgId!

/** A listing's id: a digest of what makes it unique, so installing a name twice reaches the same actor. */
export const listingIdOf = (orgId: string, pluginType: string, name: string) =>
  `porg_${createHash("sha256").update(`${orgId}\u0000${pluginType}\u0000${name}`).digest("hex").slice(0, 32)}`

export const listingOfState = (state: ListingState): Api.Listing => {
  if (state._tag !== "Live") throw new Error("a listing command succeeded without a listing")
  const { _tag, orgId, workspaces, ...listing } = state
  return listing
}

interface RemoteHeader {
  readonly name: string
  readonly isSecret?: boolean
  readonly value?: string
}
interface Remote {
  readonly type: string
  readonly url: string
  readonly headers?: ReadonlyArray<RemoteHeader>
  readonly variables?: unknown
}

/** The remote the platform connects to: Streamable HTTP first, else SSE (a package runs locally, not here). */
const remoteOf = (remotes: ReadonlyArray<Remote>): (Remote & { readonly type: TransportType }) | undefined =>
  (remotes.find((r) => r.type === "streamable-http") ?? remotes.find((r) => r.type === "sse")) as (Remote & { readonly type: TransportType }) | undefined

/** A secret with no header declared goes as a bearer token. */
const BEARER: AuthConfig = { header: "Authorization", valuePrefix: "Bearer " }

/**
 * Where a secret goes, as the remote declares it: its first header flagged `isSecret` (a value like
 * `Bearer {token}` gives its prefix), else its URL variable flagged `isSecret` (filled into the
 * endpoint at connect time), else a bearer token.
 */
const secretPlaceOf = (remote: Remote): AuthConfig => {
  const header = remote.headers?.find((h) => h.isSecret === true)
  if (header === undefined) {
    const variable = remoteVariablesByName(remote).find(([name, v]) => v.isSecret === true && remote.url.includes(`{${name}}`))
    return variable === undefined ? BEARER : { urlVariable: variable[0] }
  }
  const placeholder = header.value?.indexOf("{") ?? -1
  return { header: header.name, valuePrefix: placeholder > 0 ? header.value!.slice(0, placeholder) : "" }
}

/**
 * The remote's endpoint with its non-secret URL variables filled in (the install's `config` value,
 * else the variable's default); a secret one stays `{name}` until connect time. `missing` names a
 * variable the URL uses that has no value.
 */
const endpointOf = (remote: Remote, config: Readonly<Record<string, unknown>>): { readonly url: string } | { readonly missing: string } => {
  let url = remote.url
  for (const [name, variable] of remoteVariablesByName(remote)) {
    const placeholder = `{${name}}`
    if (variable.isSecret === true || !url.includes(placeholder)) continue
    const value = typeof config[name] === "string" ? config[name] : typeof variable.default === "string" ? variable.default : undefined
    if (value === undefined) return { missing: name }
    url = url.replaceAll(placeholder, encodeURIComponent(value))
  }
  return { url }
}

/**
 * Why a server with no remote cannot be installed: its packages run as local processes (stdio, or
 * HTTP on the machine that runs them), which the platform does not start, so a secret environment
 * value declared for them has nowhere to go.
 */
const noRemote = (name: string, packages: unknown) => {
  const described = (Array.isArray(packages) ? packages : []).map((pkg) => {
    const transport = (pkg as { readonly transport?: { readonly type?: unknown } }).transport?.type
    const secrets = packageSecretNames(pkg)
    return `${typeof transport === "string" ? transport : "stdio"}${secrets.length === 0 ? "" : `, secret environment values ${secrets.join(", ")}`}`
  })
  const asPackages = described.length === 0 ? "" : ` It is offered only as a package to run locally (${described.join("; ")}), which the platform does not run, so its environment values cannot be attached.`
  return `${name} offers no Streamable HTTP or SSE remote; only remote servers can be connected.${asPackages}`
}

/** The catalog server's version, when its registry is one the organization sees. */
const readCatalogServer = (orgId: string, serverId: string) =>
  Effect.flatMap(installableServer(orgId, serverId), (server) =>
    server === undefined
      ? Effect.fail(new NotFound({ reason: "catalog_server_not_found", message: `no catalog server ${serverId} in the registries this organization sees` }))
      : Effect.succeed(server)
  )

/** The listing an install asks for (before the denylist and the name's actor decide). */
const listingToInstall = (orgId: string, input: Api.InstallInput) =>
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
      if (remote === undefined) return yield* new BadRequest({ reason: "no_remote", message: noRemote(server.name, server.packages) })
      // the remote's own secrets only: a package's secret environment values are its local process's, never sent to a remote
      const authKind = remoteAuthKindOf(remote)
      const endpoint = endpointOf(remote, input.config ?? {})
      if ("missing" in endpoint) {
        return yield* new BadRequest({ reason: "url_variable_required", message: `${server.name}'s address needs a value for its variable ${endpoint.missing}: give it in config.${endpoint.missing}` })
      }
      return {
        pluginType: "mcp_server" as const,
        catalogServerId: input.catalogServerId,
        source: "registry" as const,
        name: server.name,
        title: server.title,
        description: server.description,
        iconUrl: server.icons[0]?.src ?? null,
        endpointUrl: endpoint.url,
        transport: remote.type,
        authKind,
        authConfig: authKind === "secret" ? secretPlaceOf(remote) : {},
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

const install = (invocation: Invocation, input: Api.InstallInput, meta: Invocation["meta"]) =>
  Effect.gen(function* () {
    const orgId = orgOf(invocation)
    const listing = yield* listingToInstall(orgId, input)
    yield* refuseDenylisted(listing.name, "installed")
    const listingId = listingIdOf(orgId, listing.pluginType, listing.name)
    const host = yield* ActorHost
    const { state } = yield* host.send(ListingActor, listingId, new InstallListing({ listingId, orgId, ...listing }), meta)
    ;(yield* Entitlements).drop(orgId)
    return listingOfState(state)
  })

export const installListing = implement(Api.installListing, (invocation, input) => install(invocation, input, invocation.meta))

export const installListings = implement(Api.installListings, (invocation, { items }) =>
  Effect.gen(function* () {
    const describe = yield* FailureDescriber
    const results = yield* Effect.forEach(
      items,
      (item, index) =>
        // each item is its own command: a retry of the whole call decides each item once
        install(invocation, item, { ...invocation.meta, commandId: `${invocation.meta.commandId}:${index}` }).pipe(
          Effect.map((listing): Api.BulkItem => ({ index, ok: true, listing })),
          Effect.catchAll((error) => {
            const { status, code, reason, message } = describe(Cause.fail(error))
            // a 5xx is the platform's failure, not the item's: the whole call fails and may be retried
            return status >= 500 ? Effect.fail(error) : Effect.succeed<Api.BulkItem>({ index, ok: false, error: { status, code, reason: reason ?? null, message } })
          })
        ),
      { concurrency: 8 }
    )
    const installed = results.filter((r) => r.ok).length
    return { results, installed, failed: results.length - installed }
  })
)

/** A change of a listing; this node's entitlement cache forgets the organization (a pack may have changed). */
const sendToListing = <C extends { readonly _tag: string }>(invocation: Invocation, listingId: string, command: C) =>
  Effect.flatMap(ActorHost, (host) => host.send(ListingActor, listingId, command as never, invocation.meta)).pipe(
    Effect.tap(() => Effect.map(Entitlements, (entitlements) => entitlements.drop(orgOf(invocation))))
  )

export const setListingEnabled = implement(Api.setListingEnabled, (invocation, { listingId, enabled }) =>
  Effect.map(sendToListing(invocation, listingId, new SetListingEnabled({ listingId, orgId: orgOf(invocation), enabled })), ({ state }) =>
    listingOfState(state)
  )
)

export const uninstallListing = implement(Api.uninstallListing, (invocation, { listingId }) =>
  Effect.map(sendToListing(invocation, listingId, new UninstallListing({ listingId, orgId: orgOf(invocation) })), ({ state }) => listingOfState(state))
)

/** An opaque position: the base64url of the last listing id of the previous page. */
const Cursor = idCursor(Api.ListingId)

export const listListings = implement(Api.listListings, (invocation, input) =>
  Effect.gen(function* () {
    const read = (after: string | undefined, rows: number) => listingsAfter(orgOf(invocation), invocation.workspaceId, input, after, rows)
    const { page, nextCursor } = yield* keysetPage(Cursor, input, read, (last) => last.listingId)
    return { listings: page, nextCursor }
  })
)

/** A listing of the organization as the read model holds it (uninstalled ones are not found). */
export const readListing = (orgId: string, listingId: string) =>
  Effect.flatMap(listingRow(orgId, listingId), (listing) =>
    listing === undefined ? Effect.fail(new NotFound({ reason: "listing_not_found", message: `no listing ${listingId} in this organization` })) : Effect.succeed(listing)
  )

export const pluginListingCapabilities: ReadonlyArray<AnyCapability> = [installListing, installListings, setListingEnabled, uninstallListing, listListings]
