/** A key is absent, active, in grace after a rotation, or revoked; every present state holds the
 * whole key so that each event can project the full `api_keys` row. */
import { Schema } from "effect"
import { apiKeyFields, RotationSuccessor } from "./events.ts"

/** Kept from a rotation until its successor is issued and after: see `successorOf`. */
const successor = Schema.optionalWith(Schema.NullOr(RotationSuccessor), { default: () => null, exact: true })

export const ApiKeyState = Schema.Union(
  Schema.TaggedStruct("Absent", {}),
  Schema.TaggedStruct("Active", apiKeyFields),
  Schema.TaggedStruct("Grace", { ...apiKeyFields, supersededBy: Schema.String, graceEndsAt: Schema.String, successor }),
  Schema.TaggedStruct("Revoked", {
    ...apiKeyFields,
    revokedAt: Schema.String,
    /** Kept from a rotation, so the row still names its successor. */
    supersededBy: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null, exact: true }),
    successor
  })
)
export type ApiKeyState = typeof ApiKeyState.Type

export const initialApiKeyState: ApiKeyState = { _tag: "Absent" }

/** When a rotated key stops working: in grace, the earlier of its own expiry and the grace's end;
 * revoked (its rotation acknowledged), at its revocation. The `api_keys` row and the rotation's
 * answer read it from here. */
export const rotatedKeyStopsAt = (key: Extract<ApiKeyState, { readonly _tag: "Grace" | "Revoked" }>): string =>
  key._tag === "Revoked" ? key.revokedAt : key.expiresAt === null || key.graceEndsAt < key.expiresAt ? key.graceEndsAt : key.expiresAt
