/**
 * Plugin credentials as a connection uses them: what a workspace's connection to a listing's
 * server sends (spec 5 rule 11): nothing for `none`; the stored secret in its declared header for
 * `secret`; the access token as a bearer for `oauth`.
 */
import { Effect, Schema } from "effect"
import type { AuthConfig, AuthKind } from "../../actors/listing/definition.ts"

/** The listing needs a credential the workspace has not given (or one that stopped working). */
export class CredentialMissing extends Schema.TaggedError<CredentialMissing>()("CredentialMissing", {
  listingId: Schema.String,
  workspaceId: Schema.String,
  authKind: Schema.String
}) {
  override get message() {
    return this.authKind === "oauth"
      ? `${this.listingId} needs an OAuth connection in this workspace: start it with plugin.oauth.start`
      : `${this.listingId} needs a secret in this workspace: enter it with plugin.credential.set_secret`
  }
}

export interface ConnectingListing {
  readonly listingId: string
  readonly authKind: AuthKind
  readonly authConfig: AuthConfig
}

/** The headers a connection of the workspace to the listing's server carries. */
export const connectHeaders = (_orgId: string, workspaceId: string, listing: ConnectingListing) =>
  listing.authKind === "none"
    ? Effect.succeed<Readonly<Record<string, string>>>({})
    : Effect.fail(new CredentialMissing({ listingId: listing.listingId, workspaceId, authKind: listing.authKind }))
