/** Events of the API key actor (key `apikey:<keyId>`). A published `_tag` is never renamed. The raw
 * key never appears here: only its lookup id and hash. */
import { Schema } from "effect"

/** Everything known about a key once created; the `api_keys` row is made of these. */
export const apiKeyFields = {
  /** Public id, `aky_...`. */
  keyId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  /** Null for an organization key. */
  workspaceId: Schema.NullOr(Schema.NonEmptyString),
  /** The creating user; calls made with the key are attributed to them. */
  createdBy: Schema.NonEmptyString,
  name: Schema.NonEmptyTrimmedString,
  /** The raw key's non-secret prefix, stored in clear for the index lookup. */
  lookupId: Schema.NonEmptyString,
  secretHash: Schema.NonEmptyString,
  scopes: Schema.Record({ key: Schema.String, value: Schema.String }),
  /** ISO 8601; null for a key that does not expire. */
  expiresAt: Schema.NullOr(Schema.String),
  /** ISO 8601, the command's time. */
  createdAt: Schema.String
}

export class ApiKeyCreated extends Schema.TaggedClass<ApiKeyCreated>()("api_key.created", apiKeyFields) {}

export class ApiKeyRevoked extends Schema.TaggedClass<ApiKeyRevoked>()("api_key.revoked", {
  keyId: Schema.NonEmptyString,
  /** ISO 8601, the command's time. */
  revokedAt: Schema.String
}) {}

export const ApiKeyEvent = Schema.Union(ApiKeyCreated, ApiKeyRevoked)
export type ApiKeyEvent = typeof ApiKeyEvent.Type
