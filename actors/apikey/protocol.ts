/** Commands of the API key actor. The application mints the key (id, lookup id, hash) and checks
 * that the creator may create it and that the workspace belongs to the organization. */
import { Schema, Struct } from "effect"
import { apiKeyFields } from "./events.ts"

export class CreateApiKey extends Schema.TaggedClass<CreateApiKey>()(
  "CreateApiKey",
  Struct.omit(apiKeyFields, "createdAt")
) {}

export class RevokeApiKey extends Schema.TaggedClass<RevokeApiKey>()("RevokeApiKey", {
  keyId: Schema.NonEmptyString
}) {}

export const ApiKeyCommand = Schema.Union(CreateApiKey, RevokeApiKey)
export type ApiKeyCommand = typeof ApiKeyCommand.Type
