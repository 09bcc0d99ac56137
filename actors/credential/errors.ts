/** Rejections of credential commands, with the HTTP status, code and reason each maps to. */
import { Schema } from "effect"

/** 404 `not_found`, reason `credential_not_found`. */
export class CredentialNotFound extends Schema.TaggedError<CredentialNotFound>()("CredentialNotFound", {
  credentialId: Schema.String
}) {}

/**
 * 400 `bad_request`, reason `oauth_state_invalid`: the callback's state is unknown, used already,
 * expired, or was started by another person.
 */
export class OAuthStateInvalid extends Schema.TaggedError<OAuthStateInvalid>()("OAuthStateInvalid", {
  credentialId: Schema.String,
  why: Schema.Literal("unknown", "used", "expired", "other_person")
}) {}

/** 409 `conflict`, reason `credential_not_active`: only an active OAuth credential is refreshed. */
export class CredentialNotActive extends Schema.TaggedError<CredentialNotActive>()("CredentialNotActive", {
  credentialId: Schema.String,
  status: Schema.NullOr(Schema.String)
}) {}

export const CredentialError = Schema.Union(CredentialNotFound, OAuthStateInvalid, CredentialNotActive)
export type CredentialError = typeof CredentialError.Type
