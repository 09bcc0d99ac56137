/**
 * Plugin credentials (spec 2.9, 3.5, 4.5, 5.11) as capabilities of the path's workspace:
 * `plugin.credential.set_secret`, `set_shared_secret` and `reauth` (API and MCP), `plugin.oauth.start` and
 * `start_shared` (API), and `plugin.oauth.callback`, the person's return from the authorization server. Secrets are sealed before they reach a command
 * (src/marketplace/Envelope.ts): the log, the read models and the answers never hold them.
 */
import { Effect } from "effect"
import { CredentialActor } from "../../actors/credential/actor.ts"
import { SetSecret } from "../../actors/credential/protocol.ts"
import { type CredentialState, ORG_SHARED_WORKSPACE } from "../../actors/credential/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { CredentialNotFound } from "../../actors/credential/errors.ts"
import { slugsOf } from "../identity/Auth.ts"
import { AuthKindMismatch, credentialIdOf, sealContext } from "./Credentials.ts"
import { beginAuthorization, completeAuthorization } from "./OAuth.ts"
import { Envelope } from "./Envelope.ts"
import * as Api from "./Api.ts"
import { readListing } from "./PluginListings.ts"
import { refuseDenylisted } from "./PluginSettings.ts"
import { readCredential } from "./Queries.ts"

export const credentialOfState = (state: CredentialState): Api.Credential => {
  if (state._tag !== "Live") throw new Error("a credential command succeeded without a credential")
  return {
    credentialId: state.credentialId,
    listingId: state.listingId,
    workspaceId: state.workspaceId,
    authKind: state.authKind,
    status: state.status,
    scopes: state.scopes,
    expiresAt: state.expiresAt,
    lastRefreshedAt: state.lastRefreshedAt,
    oauthClientId: state.clientId,
    updatedAt: state.updatedAt
  }
}

/** The listing, on the allow-list and not denylisted, when it authenticates with `kind`. */
export const listingWithAuth = (invocation: Invocation, listingId: string, kind: "oauth" | "secret") =>
  Effect.gen(function* () {
    const listing: Api.Listing = yield* readListing(invocation.orgId!, listingId)
    yield* refuseDenylisted(listing.name, "connected")
    if (listing.authKind !== kind) return yield* new AuthKindMismatch({ listingId, authKind: listing.authKind, wanted: kind })
    return listing
  })

/** The secret of a listing whose auth kind is secret, sealed and recorded as the credential of `workspaceId`. */
const storeSecret = (invocation: Invocation, workspaceId: string, listingId: string, secret: string) =>
  Effect.gen(function* () {
    yield* listingWithAuth(invocation, listingId, "secret")
    const credentialId = credentialIdOf(workspaceId, listingId)
    const sealed = yield* (yield* Envelope).seal(secret, sealContext(credentialId, "secret"))
    const host = yield* ActorHost
    const { state } = yield* host.send(
      CredentialActor,
      credentialId,
      new SetSecret({ credentialId, orgId: invocation.orgId!, workspaceId, listingId, secret: { ciphertext: sealed.ciphertext, keyId: sealed.keyId } }),
      invocation.meta
    )
    return credentialOfState(state)
  })

export const setSecret = implement(Api.setSecret, (invocation, { listingId, secret }) => storeSecret(invocation, invocation.workspaceId!, listingId, secret))

export const setSharedSecret = implement(Api.setSharedSecret, (invocation, { listingId, secret }) => storeSecret(invocation, ORG_SHARED_WORKSPACE, listingId, secret))

/** Begins the OAuth connection of a listing whose auth kind is oauth, as the credential of `workspaceId`. */
const startAuthorization = (invocation: Invocation, workspaceId: string, input: typeof Api.startOAuth.input.Type) =>
  Effect.gen(function* () {
    const listing = yield* listingWithAuth(invocation, input.listingId, "oauth")
    return yield* beginAuthorization({
      orgId: invocation.orgId!,
      workspaceId,
      userId: invocation.principal.attributedTo,
      listing: { listingId: listing.listingId, endpointUrl: listing.endpointUrl!, authConfig: listing.authConfig },
      client: input.clientId === undefined ? undefined : { clientId: input.clientId, clientSecret: input.clientSecret ?? null },
      meta: invocation.meta
    })
  })

export const startOAuth = implement(Api.startOAuth, (invocation, input) => startAuthorization(invocation, invocation.workspaceId!, input))

export const startSharedOAuth = implement(Api.startSharedOAuth, (invocation, input) => startAuthorization(invocation, ORG_SHARED_WORKSPACE, input))

export const reauthenticate = implement(Api.reauthenticate, (invocation, { listingId }) =>
  Effect.gen(function* () {
    const listing = yield* listingWithAuth(invocation, listingId, "oauth")
    const workspaceId = invocation.workspaceId!
    const stored = yield* readCredential(workspaceId, listingId)
    if (stored === undefined || stored.oauth_client_id === null) {
      return yield* new CredentialNotFound({ credentialId: credentialIdOf(workspaceId, listingId) })
    }
    return yield* beginAuthorization({
      orgId: invocation.orgId!,
      workspaceId,
      userId: invocation.principal.attributedTo,
      listing: { listingId, endpointUrl: listing.endpointUrl!, authConfig: listing.authConfig },
      client: undefined,
      meta: invocation.meta
    })
  })
)

export const oauthCallback = implement(Api.oauthCallback, (invocation, input) =>
  Effect.gen(function* () {
    const state = yield* completeAuthorization({
      userId: invocation.principal.attributedTo,
      state: input.state,
      code: input.code,
      error: input.error,
      meta: invocation.meta
    })
    const credential = credentialOfState(state)
    const orgId = state._tag === "Live" ? state.orgId : ""
    // a shared credential serves every workspace: the organization's page, and any of its workspaces' pages to return to
    if (credential.workspaceId === ORG_SHARED_WORKSPACE) return { ...credential, appRoute: `/${yield* slugsOf(orgId, null)}` }
    return { ...credential, appRoute: `/${yield* slugsOf(orgId, credential.workspaceId)}/settings/integrations` }
  })
)

export const pluginCredentialCapabilities: ReadonlyArray<AnyCapability> = [setSecret, setSharedSecret, startOAuth, startSharedOAuth, oauthCallback, reauthenticate]
