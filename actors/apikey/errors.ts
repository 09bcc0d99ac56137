/** Rejections of the API key actor. */
import { Schema } from "effect"

export class ApiKeyAlreadyExists extends Schema.TaggedError<ApiKeyAlreadyExists>()("ApiKeyAlreadyExists", {
  keyId: Schema.String
}) {
  override get message() {
    return `API key ${this.keyId} already exists`
  }
}

export class ApiKeyNotFound extends Schema.TaggedError<ApiKeyNotFound>()("ApiKeyNotFound", {
  keyId: Schema.String
}) {
  override get message() {
    return `API key ${this.keyId} does not exist`
  }
}

/** Spec 5 rule 9: `purpose` marks machine credentials (host, gateway, CLI login), which
 * `create_api_key` must not mint. */
export class ReservedScopeKey extends Schema.TaggedError<ReservedScopeKey>()("ReservedScopeKey", {
  scopeKey: Schema.String
}) {
  override get message() {
    return `scope key '${this.scopeKey}' is reserved and cannot be set on an API key`
  }
}

/** A credential issued with a purpose no rule knows. */
export class UnknownPurpose extends Schema.TaggedError<UnknownPurpose>()("UnknownPurpose", {
  purpose: Schema.String
}) {
  override get message() {
    return `'${this.purpose}' is not a known credential purpose`
  }
}

/** Only an active key can be rotated (a key in grace has already been rotated). */
export class ApiKeyNotActive extends Schema.TaggedError<ApiKeyNotActive>()("ApiKeyNotActive", {
  keyId: Schema.String,
  status: Schema.String
}) {
  override get message() {
    return `API key ${this.keyId} is ${this.status}, not active`
  }
}

/** An acknowledgement naming a key that did not replace this one. */
export class NotARotation extends Schema.TaggedError<NotARotation>()("NotARotation", {
  keyId: Schema.String,
  newKeyId: Schema.String
}) {
  override get message() {
    return `API key ${this.newKeyId} is not the rotation of ${this.keyId}`
  }
}

export const ApiKeyError = Schema.Union(ApiKeyAlreadyExists, ApiKeyNotFound, ReservedScopeKey, UnknownPurpose, ApiKeyNotActive, NotARotation)
export type ApiKeyError = typeof ApiKeyError.Type
