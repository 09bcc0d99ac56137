/**
 * Plugin credentials (spec 2.9, 3.5, 4.5, 5.11) as capabilities of the path's workspace:
 * `plugin.credential.set_secret` (API and MCP). Secrets are sealed before they reach a command
 * (src/marketplace/Envelope.ts): the log, the read models and the answers never hold them.
 */
import { Effect, Schema } from "effect"
import { CredentialActor } from "../../actors/credential/actor.ts"
import { SetSecret } from "../../actors/credential/protocol.ts"
import type { CredentialState } from "../../actors/credential/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, defineCapability, type Invocation } from "../Capabilities.ts"
import { AuthKindMismatch, credentialIdOf, sealContext } from "../marketplace/Credentials.ts"
import { Envelope } from "../marketplace/Envelope.ts"
import { type Listing, ListingId, pluginManagers, readListing } from "./PluginListings.ts"

export const credentialCommon = {
  scope: "workspace",
  roles: pluginManagers,
  claimedBy: "builtin",
  needsApproval: false,
  destructive: false,
  mutating: true,
  changesAccess: false,
  sensitivity: "high"
} as const

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

export const pluginCredentialCapabilities: ReadonlyArray<AnyCapability> = [setSecret]
