import { Schema } from "effect"
import { OAuthOrigin, SealedValue } from "./protocol.ts"

/** An authorization under way: what the callback needs, bound to the state's hash and the person. */
export const PendingAuthorization = Schema.Struct({
  stateHash: Schema.String,
  userId: Schema.String,
  expiresAt: Schema.String,
  codeVerifier: SealedValue,
  redirectUri: Schema.String,
  clientId: Schema.String,
  clientSecret: Schema.NullOr(SealedValue),
  origin: OAuthOrigin,
  scopes: Schema.Array(Schema.String),
  /** Set by the callback: a state is used once. */
  consumedAt: Schema.NullOr(Schema.String)
})
export type PendingAuthorization = typeof PendingAuthorization.Type

/**
 * The workspace id an organization's shared credentials are recorded under (spec 3.4, Credential: a
 * sentinel workspace id marks org-level shared credentials). A listing id belongs to one
 * organization, so one sentinel serves them all.
 */
export const ORG_SHARED_WORKSPACE = "wsp_organization"

export const CredentialStatus = Schema.Literal("active", "needs_reauth", "revoked")

export const LiveCredential = Schema.TaggedStruct("Live", {
  credentialId: Schema.String,
  orgId: Schema.String,
  workspaceId: Schema.String,
  listingId: Schema.String,
  authKind: Schema.Literal("oauth", "secret"),
  secret: Schema.NullOr(SealedValue),
  accessToken: Schema.NullOr(SealedValue),
  refreshToken: Schema.NullOr(SealedValue),
  clientId: Schema.NullOr(Schema.String),
  clientSecret: Schema.NullOr(SealedValue),
  origin: Schema.NullOr(OAuthOrigin),
  scopes: Schema.Array(Schema.String),
  expiresAt: Schema.NullOr(Schema.String),
  /** Null until the first secret or tokens: an authorization started but not completed yet. */
  status: Schema.NullOr(CredentialStatus),
  statusReason: Schema.NullOr(Schema.String),
  lastRefreshedAt: Schema.NullOr(Schema.String),
  pending: Schema.NullOr(PendingAuthorization),
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type LiveCredential = typeof LiveCredential.Type

export const CredentialState = Schema.Union(Schema.TaggedStruct("Absent", {}), LiveCredential)
export type CredentialState = typeof CredentialState.Type

export const initialCredentialState: CredentialState = { _tag: "Absent" }
