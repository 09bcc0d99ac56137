/** Events of the API key actor (key `apikey:<keyId>`). A published `_tag` is never renamed. The raw
 * key never appears here: only its lookup id and hash. */
import { Schema } from "effect"

const nullByDefault = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(Schema.NullOr(schema), { default: () => null, exact: true })

/** Everything known about a key once created; the `api_keys` row is made of these. */
export const apiKeyFields = {
  /** Public id, `aky_...`. */
  keyId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  /** Null for an organization key. */
  workspaceId: Schema.NullOr(Schema.NonEmptyString),
  /** The creating user; calls made with the key are attributed to them. For a CLI login, the
   * person who approved it, whom the login acts as. */
  createdBy: Schema.NonEmptyString,
  name: Schema.NonEmptyTrimmedString,
  /** The raw key's non-secret prefix, stored in clear for the index lookup. */
  lookupId: Schema.NonEmptyString,
  secretHash: Schema.NonEmptyString,
  /** `purpose` here marks a machine credential or CLI login (see purposes.ts). */
  scopes: Schema.Record({ key: Schema.String, value: Schema.String }),
  /** ISO 8601; null for a key that does not expire. */
  expiresAt: Schema.NullOr(Schema.String),
  /** ISO 8601, the command's time. */
  createdAt: Schema.String,
  /** On an enterprise plan: the organization's custom role the key acts as. */
  customRole: nullByDefault(Schema.NonEmptyString),
  /** For a host key: the enrolled machine whose calls it makes. */
  machineId: nullByDefault(Schema.NonEmptyString),
  /** For a key issued by rotation: the key it replaces. */
  supersedes: nullByDefault(Schema.NonEmptyString)
}

/**
 * What a rotation issues beyond the old key's own fields: the successor's secret (lookup id and
 * hash; the raw key goes to the caller alone) and the person who rotated, who creates it.
 */
export const RotationSuccessor = Schema.Struct({
  lookupId: Schema.NonEmptyString,
  secretHash: Schema.NonEmptyString,
  createdBy: Schema.NonEmptyString
})

export class ApiKeyCreated extends Schema.TaggedClass<ApiKeyCreated>()("api_key.created", apiKeyFields) {}

/** The key was rotated: `supersededBy` replaces it, and it keeps working until `graceEndsAt`. */
export class ApiKeyRotated extends Schema.TaggedClass<ApiKeyRotated>()("api_key.rotated", {
  keyId: Schema.NonEmptyString,
  supersededBy: Schema.NonEmptyString,
  /** ISO 8601. */
  graceEndsAt: Schema.String,
  /**
   * The durable intent: with the old key's fields, everything the successor is issued with, so a
   * crash before the successor's own `api_key.created` leaves a rotation that can be completed
   * (`successorOf`). Null in rotations recorded before it was carried.
   */
  successor: nullByDefault(RotationSuccessor)
}) {}

export class ApiKeyRevoked extends Schema.TaggedClass<ApiKeyRevoked>()("api_key.revoked", {
  keyId: Schema.NonEmptyString,
  /** ISO 8601, the command's time. */
  revokedAt: Schema.String,
  /** `revoked`: revoked directly; `rotation_acknowledged`: the new key's holder confirmed the rotation. */
  reason: Schema.optionalWith(Schema.Literal("revoked", "rotation_acknowledged"), { default: () => "revoked", exact: true })
}) {}

export const ApiKeyEvent = Schema.Union(ApiKeyCreated, ApiKeyRotated, ApiKeyRevoked)
export type ApiKeyEvent = typeof ApiKeyEvent.Type
