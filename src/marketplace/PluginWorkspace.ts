/**
 * Workspace enablement of allow-listed MCP servers (spec 2.9, 3.5, 4.5): `plugin.workspace.set_enabled`
 * and `plugin.workspace.check_health` on the API (`/v1/{org}/{ws}/plugin/workspace/...`) and MCP,
 * for the path's workspace. Enabling connects to the server with the MCP SDK client and records
 * what it found (`health_status`, `last_health_check_at`, the tools listed) on the listing. A server
 * that answers with an OAuth challenge is unhealthy with `healthError` `oauth_required`, and its
 * listing becomes `oauth` (spec 6.3.4: OAuth is detected at connect time), so it can be connected.
 */
import { Effect, Either } from "effect"
import { ListingActor } from "../../actors/listing/actor.ts"
import { RecordHealth, SetWorkspaceEnabled } from "../../actors/listing/protocol.ts"
import type { ListingState } from "../../actors/listing/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { connectionOf } from "./Credentials.ts"
import { listTools, McpOAuthRequired } from "./McpConnect.ts"
import { nodeFetch } from "../platform/Outbound.ts"
import * as Api from "./Api.ts"
import { listingOfState, readListing } from "./PluginListings.ts"
import { refuseDenylisted } from "./PluginSettings.ts"

const installOf = (state: ListingState, workspaceId: string): Api.WorkspaceInstall => {
  if (state._tag !== "Live") throw new Error("a listing command succeeded without a listing")
  const install = state.workspaces[workspaceId]
  return {
    listingId: state.listingId,
    workspaceId,
    enabled: install?.enabled ?? false,
    healthStatus: install?.healthStatus ?? "unknown",
    lastHealthCheckAt: install?.lastHealthCheckAt ?? null,
    healthError: install?.healthError ?? null,
    tools: install?.tools ?? []
  }
}

/**
 * Connects to the listing's server as the workspace would (its credential attached), lists the
 * tools and records the outcome; the install as recorded.
 */
const checkHealth = (invocation: Invocation, listing: Api.Listing) =>
  Effect.gen(function* () {
    yield* refuseDenylisted(listing.name, "connected")
    const workspaceId = invocation.workspaceId!
    const fetch = yield* nodeFetch
    // what the server (or a missing credential) caused is its health; the platform's own failures are not
    const endpointUrl = listing.endpointUrl!
    const found = yield* Effect.flatMap(connectionOf(workspaceId, { ...listing, endpointUrl }), (connection) =>
      listTools({ ...connection, endpointUrl, transport: listing.transport! }, fetch)
    ).pipe(
      Effect.map((tools): Either.Either<ReadonlyArray<string>, { readonly message: string }> => Either.right(tools)),
      Effect.catchTags({
        McpUnreachable: (e) => Effect.succeed(Either.left(e)),
        McpOAuthRequired: (e) => Effect.succeed(Either.left(e)),
        CredentialMissing: (e) => Effect.succeed(Either.left(e)),
        EnvelopeUnreadable: (e) => Effect.succeed(Either.left(e)),
        EncryptionNotConfigured: (e) => Effect.succeed(Either.left(e))
      })
    )
    const oauthRequired = Either.isLeft(found) && found.left instanceof McpOAuthRequired
    const host = yield* ActorHost
    const { listingId } = listing
    const { state } = yield* host.send(
      ListingActor,
      listingId,
      new RecordHealth({
        listingId,
        orgId: invocation.orgId!,
        workspaceId,
        status: Either.isRight(found) ? "healthy" : "unhealthy",
        error: Either.isLeft(found) ? (oauthRequired ? McpOAuthRequired.healthError : found.left.message) : null,
        tools: Either.getOrElse(found, () => []),
        oauthRequired
      }),
      { ...invocation.meta, commandId: `${invocation.meta.commandId}:health` }
    )
    return installOf(state, workspaceId)
  })

export const setWorkspaceEnabled = implement(Api.setWorkspaceEnabled, (invocation, { listingId, enabled }) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const workspaceId = invocation.workspaceId!
    // disabling is always allowed; enabling a name denylisted since its install is not
    if (enabled) yield* refuseDenylisted((yield* readListing(invocation.orgId!, listingId)).name, "enabled")
    const { state } = yield* host.send(ListingActor, listingId, new SetWorkspaceEnabled({ listingId, orgId: invocation.orgId!, workspaceId, enabled }), invocation.meta)
    return enabled ? yield* checkHealth(invocation, listingOfState(state)) : installOf(state, workspaceId)
  })
)

export const checkWorkspaceHealth = implement(Api.checkWorkspaceHealth, (invocation, { listingId }) =>
  Effect.flatMap(readListing(invocation.orgId!, listingId), (listing) => checkHealth(invocation, listing))
)

export const pluginWorkspaceCapabilities: ReadonlyArray<AnyCapability> = [setWorkspaceEnabled, checkWorkspaceHealth]
