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

export const ApiKeyError = Schema.Union(ApiKeyAlreadyExists, ApiKeyNotFound, ReservedScopeKey)
export type ApiKeyError = typeof ApiKeyError.Type
