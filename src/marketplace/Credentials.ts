/**
 * Plugin credentials as a connection uses them (spec 5 rule 11): what a workspace's connection to a
 * listing's server sends: nothing for `none`; the stored secret in its declared header, or its
 * declared URL variable, for `secret`; the access token as a bearer for `oauth`. The workspace's
 * own credential wins over the organization's shared one. Secrets are opened from their envelopes
 * only here, at connect time, and never leave the request they are sent in.
 */
import { Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import type { AuthConfig, AuthKind } from "../../actors/listing/definition.ts"
import { Envelope } from "./Envelope.ts"
import type { McpConnection } from "./McpConnect.ts"
import { ORG_SHARED_WORKSPACE } from "../../actors/credential/state.ts"
import { readCredential } from "./Queries.ts"

/** A credential's id: a digest of its workspace and listing, so there is one per (workspace_id, org_listing_id). */
export const credentialIdOf = (workspaceId: string, listingId: string) =>
  `mcrd_${createHash("sha256").update(`${workspaceId}\u0000${listingId}`).digest("hex").slice(0, 32)}`

/** What each envelope of a credential is sealed for: a value copied to another row or column does not open. */
export const sealContext = (credentialId: string, column: "secret" | "access_token" | "refresh_token" | "client_secret" | "code_verifier") =>
  `${credentialId}:${column}`

/** The listing needs a credential the workspace has not given, or one that stopped working. */
export class CredentialMissing extends Schema.TaggedError<CredentialMissing>()("CredentialMissing", {
  listingId: Schema.String,
  workspaceId: Schema.String,
  authKind: Schema.String,
  status: Schema.NullOr(Schema.String)
}) {
  override get message() {
    if (this.status === "needs_reauth") return `the OAuth connection of ${this.listingId} in this workspace needs re-authentication: plugin.credential.reauth`
    return this.authKind === "oauth"
      ? `${this.listingId} needs an OAuth connection in this workspace: start it with plugin.oauth.start`
      : `${this.listingId} needs a secret in this workspace: enter it with plugin.credential.set_secret`
  }
}

/** 409 `conflict`, reason `auth_kind_mismatch`: the credential asked for is not the listing's kind. */
export class AuthKindMismatch extends Schema.TaggedError<AuthKindMismatch>()("AuthKindMismatch", {
  listingId: Schema.String,
  authKind: Schema.String,
  wanted: Schema.String
}) {
  override get message() {
    return `${this.listingId} authenticates with '${this.authKind}', not '${this.wanted}'`
  }
}

export interface ConnectingListing {
  readonly listingId: string
  readonly endpointUrl: string
  readonly authKind: AuthKind
  readonly authConfig: AuthConfig
}

/**
 * A secret where the listing's remote takes it: filled into its URL variable (encoded as a URL
 * component; both forms concealed in messages), else in its header.
 */
const secretConnection = (listing: ConnectingListing, secret: string): McpConnection => {
  const variable = listing.authConfig.urlVariable
  if (variable !== undefined) {
    const encoded = encodeURIComponent(secret)
    return { url: listing.endpointUrl.replaceAll(`{${variable}}`, encoded), headers: {}, conceal: [encoded, secret] }
  }
  return { url: listing.endpointUrl, headers: { [listing.authConfig.header ?? "Authorization"]: `${listing.authConfig.valuePrefix ?? ""}${secret}` }, conceal: [] }
}

/** Where a connection of the workspace to the listing's server goes, and what it carries. */
export const connectionOf = (workspaceId: string, listing: ConnectingListing) =>
  Effect.gen(function* () {
    if (listing.authKind === "none") return { url: listing.endpointUrl, headers: {}, conceal: [] } satisfies McpConnection
    const missing = (status: string | null) => new CredentialMissing({ listingId: listing.listingId, workspaceId, authKind: listing.authKind, status })
    // the workspace's own credential, else the organization's shared one (spec 2.9)
    const row = (yield* readCredential(workspaceId, listing.listingId)) ?? (yield* readCredential(ORG_SHARED_WORKSPACE, listing.listingId))
    if (row === undefined || row.status !== "active" || row.auth_kind !== listing.authKind) return yield* missing(row?.status ?? null)
    const envelope = yield* Envelope
    const credentialId = row.credential_id as string
    if (listing.authKind === "secret") {
      const secret = yield* envelope.open(row.secret_enc, row.token_kms_key_id, sealContext(credentialId, "secret"))
      if (secret === null) return yield* missing(null)
      return secretConnection(listing, secret)
    }
    const token = yield* envelope.open(row.access_token_enc, row.token_kms_key_id, sealContext(credentialId, "access_token"))
    if (token === null) return yield* missing(null)
    return { url: listing.endpointUrl, headers: { Authorization: `Bearer ${token}` }, conceal: [] } satisfies McpConnection
  })
