/** A key is absent, active, in grace after a rotation, or revoked; every present state holds the
 * whole key so that each event can project the full `api_keys` row. */
import { Schema } from "effect"
import { apiKeyFields } from "./events.ts"

export const ApiKeyState = Schema.Union(
  Schema.TaggedStruct("Absent", {}),
  Schema.TaggedStruct("Active", apiKeyFields),
  Schema.TaggedStruct("Grace", { ...apiKeyFields, supersededBy: Schema.String, graceEndsAt: Schema.String }),
  Schema.TaggedStruct("Revoked", {
    ...apiKeyFields,
    revokedAt: Schema.String,
    /** Kept from a rotation, so the row still names its successor. */
    supersededBy: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null, exact: true })
  })
)
export type ApiKeyState = typeof ApiKeyState.Type

export const initialApiKeyState: ApiKeyState = { _tag: "Absent" }
