/** Events of a plugin credential; `_tag` is the published type and is never renamed. Secrets appear
 * only as envelopes: the log is a record auditors read. */
import { Schema } from "effect"
import { pendingAuthorization, place, SealedValue, target, Tokens } from "./protocol.ts"


export class SecretSet extends Schema.TaggedClass<SecretSet>()("credential.secret_set", { ...target, ...place, secret: SealedValue, at: Schema.String }) {}

export class AuthorizationStarted extends Schema.TaggedClass<AuthorizationStarted>()("credential.authorization_started", {
  ...target,
  ...place,
  ...pendingAuthorization,
  at: Schema.String
}) {}

export class AuthorizationConsumed extends Schema.TaggedClass<AuthorizationConsumed>()("credential.authorization_consumed", {
  ...target,
  stateHash: Schema.NonEmptyString,
  at: Schema.String
}) {}

/** The code was exchanged: the credential is active with these tokens, the pending client's id and secret. */
export class Authorized extends Schema.TaggedClass<Authorized>()("credential.authorized", { ...target, tokens: Tokens, at: Schema.String }) {}

export class Refreshed extends Schema.TaggedClass<Refreshed>()("credential.refreshed", { ...target, tokens: Tokens, at: Schema.String }) {}

export class NeedsReauth extends Schema.TaggedClass<NeedsReauth>()("credential.needs_reauth", { ...target, reason: Schema.String, at: Schema.String }) {}

export const CredentialEvent = Schema.Union(SecretSet, AuthorizationStarted, AuthorizationConsumed, Authorized, Refreshed, NeedsReauth)
export type CredentialEvent = typeof CredentialEvent.Type
