/** Commands of the API key actor. The application mints the key (id, lookup id, hash) and checks
 * that the caller may manage it and that the workspace belongs to the organization. */
import { Schema, Struct } from "effect"
import { apiKeyFields, RotationSuccessor } from "./events.ts"

/** `create_api_key`: an ordinary key; a `purpose` scope is refused. */
export class CreateApiKey extends Schema.TaggedClass<CreateApiKey>()(
  "CreateApiKey",
  Struct.omit(apiKeyFields, "createdAt")
) {}

/** A machine credential or CLI login: the `purpose` scope must name a known purpose. */
export class IssueCredential extends Schema.TaggedClass<IssueCredential>()(
  "IssueCredential",
  Struct.omit(apiKeyFields, "createdAt")
) {}

export class RotateApiKey extends Schema.TaggedClass<RotateApiKey>()("RotateApiKey", {
  keyId: Schema.NonEmptyString,
  newKeyId: Schema.NonEmptyString,
  /** ISO 8601: the command's time plus the rotation grace. */
  graceEndsAt: Schema.String,
  /** The successor's secret and creator, recorded with the rotation (see `successorOf`). */
  successor: RotationSuccessor
}) {}

/** Sent to the OLD key, naming the new one that confirms the rotation. */
export class AcknowledgeRotation extends Schema.TaggedClass<AcknowledgeRotation>()("AcknowledgeRotation", {
  keyId: Schema.NonEmptyString,
  newKeyId: Schema.NonEmptyString
}) {}

export class RevokeApiKey extends Schema.TaggedClass<RevokeApiKey>()("RevokeApiKey", {
  keyId: Schema.NonEmptyString
}) {}

export const ApiKeyCommand = Schema.Union(CreateApiKey, IssueCredential, RotateApiKey, AcknowledgeRotation, RevokeApiKey)
export type ApiKeyCommand = typeof ApiKeyCommand.Type
