/**
 * Plugin credentials (spec 2.9, 3.5, 4.5, 5.11) as capabilities of the path's workspace:
 * `plugin.credential.set_secret` and `plugin.credential.reauth` (API and MCP), `plugin.oauth.start`
 * (API), and `plugin.oauth.callback`, the person's return from the authorization server. Secrets are sealed before they reach a command
 * (src/marketplace/Envelope.ts): the log, the read models and the answers never hold them.
 */
import { Effect, Schema } from "effect"
import { CredentialActor } from "../../actors/credential/actor.ts"
import { SetSecret } from "../../actors/credential/protocol.ts"
import type { CredentialState } from "../../actors/credential/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, defineCapability, type Invocation } from "../checkpoint/Capability.ts"
import { CredentialNotFound } from "../../actors/credential/errors.ts"
import { slugsOf } from "../identity/Auth.ts"
import { AuthKindMismatch, credentialIdOf, readCredential, sealContext } from "./Credentials.ts"
import { beginAuthorization, completeAuthorization } from "./OAuth.ts"
import { Envelope } from "./Envelope.ts"
import { type Listing, ListingId, readListing, workspaceWrites } from "./PluginListings.ts"

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

export const credentialOfState = (state: CredentialState): Credential => {
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

/** The listing, on the allow-list, when it authenticates with `kind`. */
export const listingWithAuth = (invocation: Invocation, listingId: string, kind: "oauth" | "secret") =>
  Effect.gen(function* () {
    const listing: Listing = yield* readListing(invocation.orgId!, listingId)
    if (listing.authKind !== kind) return yield* new AuthKindMismatch({ listingId, authKind: listing.authKind, wanted: kind })
    return listing
  })

export const setSecret = defineCapability({
  ...credentialCommon,
  surfaces: ["api", "mcp"],
  name: "plugin.credential.set_secret",
  description:
    "Store the API key or header secret of an allow-listed server whose auth kind is secret, for this workspace; it is encrypted at rest and sent in the listing's declared header when connecting. Replaces any secret stored before.",
  input: Schema.Struct({ listingId: ListingId, secret: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(8192)) }),
  output: Credential,
  handler: (invocation, { listingId, secret }) =>
    Effect.gen(function* () {
      yield* listingWithAuth(invocation, listingId, "secret")
      const workspaceId = invocation.workspaceId!
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
})

const AuthorizationStarted = Schema.Struct({
  credentialId: Schema.String,
  /** Where to send the person: the authorization server's page, with PKCE S256 and the state. */
  authorizationUrl: Schema.String,
  /** The callback must come before then (single use). */
  expiresAt: Schema.String
})

const ClientId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500))

export const startOAuth = defineCapability({
  ...credentialCommon,
  // the state is bound to the person who starts it: a person, on the API only (spec 4.5)
  surfaces: ["api"],
  requiresPerson: true,
  name: "plugin.oauth.start",
  description:
    "Begin connecting an allow-listed OAuth server for this workspace: discovers its authorization server, registers a client (or uses the stored one, or the clientId and clientSecret given), and returns the URL to send the person to.",
  input: Schema.Struct({ listingId: ListingId, clientId: Schema.optional(ClientId), clientSecret: Schema.optional(Schema.String.pipe(Schema.maxLength(2000))) }),
  output: AuthorizationStarted,
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const listing = yield* listingWithAuth(invocation, input.listingId, "oauth")
      return yield* beginAuthorization({
        orgId: invocation.orgId!,
        workspaceId: invocation.workspaceId!,
        userId: invocation.principal.attributedTo,
        listing: { listingId: listing.listingId, endpointUrl: listing.endpointUrl!, authConfig: listing.authConfig },
        client: input.clientId === undefined ? undefined : { clientId: input.clientId, clientSecret: input.clientSecret ?? null },
        meta: invocation.meta
      })
    })
})

export const reauthenticate = defineCapability({
  ...credentialCommon,
  surfaces: ["api", "mcp"],
  requiresPerson: true,
  name: "plugin.credential.reauth",
  description:
    "Re-authenticate this workspace's OAuth connection to an allow-listed server (after needs_reauth, or at will): restarts at authorization with the stored client id and returns the URL to send the person to.",
  input: Schema.Struct({ listingId: ListingId }),
  output: AuthorizationStarted,
  handler: (invocation, { listingId }) =>
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
})

export const oauthCallback = defineCapability({
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
  output: Schema.Struct({ ...Credential.fields, appRoute: Schema.String }),
  handler: (invocation, input) =>
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
      const slugs = yield* slugsOf(orgId, credential.workspaceId)
      return { ...credential, appRoute: `/${slugs ?? ""}/settings/integrations` }
    })
})

export const pluginCredentialCapabilities: ReadonlyArray<AnyCapability> = [setSecret, startOAuth, oauthCallback, reauthenticate]
