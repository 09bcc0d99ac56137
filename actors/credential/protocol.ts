/** Commands of a plugin credential (`credential:<credentialId>`, one per workspace and listing).
 * Secrets arrive sealed (src/marketplace/Envelope.ts): no command, event or state holds plain text.
 * What needs I/O (discovery, registration, the token exchange, a refresh) is done before a command. */
import { Schema } from "effect"

export const target = { credentialId: Schema.NonEmptyString }

/** Where a credential belongs. */
export const place = { orgId: Schema.NonEmptyString, workspaceId: Schema.NonEmptyString, listingId: Schema.NonEmptyString }

/** An envelope and the key label it was sealed under. */
export const SealedValue = Schema.Struct({ ciphertext: Schema.String, keyId: Schema.String })
export type SealedValue = typeof SealedValue.Type

/** Where tokens of an OAuth credential come from (non-secret). */
export const OAuthOrigin = Schema.Struct({
  authorizationServerUrl: Schema.String,
  /** The RFC 8707 resource the tokens are for (the MCP server's, from its RFC 9728 metadata). */
  resource: Schema.NullOr(Schema.String)
})
export type OAuthOrigin = typeof OAuthOrigin.Type

/** What an authorization in progress holds: the command that starts it and the event it makes carry the same. */
export const pendingAuthorization = {
  stateHash: Schema.NonEmptyString,
  userId: Schema.NonEmptyString,
  expiresAt: Schema.String,
  codeVerifier: SealedValue,
  redirectUri: Schema.String,
  clientId: Schema.NonEmptyString,
  clientSecret: Schema.NullOr(SealedValue),
  origin: OAuthOrigin,
  scopes: Schema.Array(Schema.String)
}

/** An admin enters the secret (spec 5 rule 11): stored sealed, active at once. */
export class SetSecret extends Schema.TaggedClass<SetSecret>()("SetSecret", { ...target, ...place, secret: SealedValue }) {}

/** An authorization began: the state (by its hash) is bound to the person, listing and workspace. */
export class StartAuthorization extends Schema.TaggedClass<StartAuthorization>()("StartAuthorization", {
  ...target,
  ...place,
  ...pendingAuthorization
}) {}

/** The callback came: the state is used up whatever follows (single use). */
export class ConsumeAuthorization extends Schema.TaggedClass<ConsumeAuthorization>()("ConsumeAuthorization", {
  ...target,
  stateHash: Schema.NonEmptyString,
  userId: Schema.NonEmptyString
}) {}

/** Tokens from the authorization server. */
export const Tokens = Schema.Struct({
  accessToken: SealedValue,
  /** Null: none issued (on a refresh: the one held stays). */
  refreshToken: Schema.NullOr(SealedValue),
  expiresAt: Schema.NullOr(Schema.String),
  scopes: Schema.Array(Schema.String)
})
export type Tokens = typeof Tokens.Type

/** The code of a consumed state was exchanged. */
export class CompleteAuthorization extends Schema.TaggedClass<CompleteAuthorization>()("CompleteAuthorization", {
  ...target,
  stateHash: Schema.NonEmptyString,
  tokens: Tokens
}) {}

/** The refresh watcher refreshed the tokens of an active credential. */
export class RecordRefresh extends Schema.TaggedClass<RecordRefresh>()("RecordRefresh", { ...target, tokens: Tokens }) {}

/** The refresh watcher could not refresh: a person must authorize again (spec 3.5). */
export class MarkNeedsReauth extends Schema.TaggedClass<MarkNeedsReauth>()("MarkNeedsReauth", { ...target, reason: Schema.String }) {}

export const CredentialCommand = Schema.Union(SetSecret, StartAuthorization, ConsumeAuthorization, CompleteAuthorization, RecordRefresh, MarkNeedsReauth)
export type CredentialCommand = typeof CredentialCommand.Type
