/** A key is absent, active or revoked; the last two hold the whole key so that every event can
 * project the full `api_keys` row. */
import { Schema } from "effect"
import { apiKeyFields } from "./events.ts"

export const ApiKeyState = Schema.Union(
  Schema.TaggedStruct("Absent", {}),
  Schema.TaggedStruct("Active", apiKeyFields),
  Schema.TaggedStruct("Revoked", { ...apiKeyFields, revokedAt: Schema.String })
)
export type ApiKeyState = typeof ApiKeyState.Type

export const initialApiKeyState: ApiKeyState = { _tag: "Absent" }
