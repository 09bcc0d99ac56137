/** Commands of a workspace's fleet (`fleet:<workspaceId>`); ids and time come from outside. */
import { Schema } from "effect"
import { PolicyRule } from "./events.ts"

const place = { orgId: Schema.NonEmptyString, workspaceId: Schema.NonEmptyString }

/** Replace the policy bundle; with `expectedVersion`, only if that is still the current version. */
export class SetPolicy extends Schema.TaggedClass<SetPolicy>()("SetPolicy", {
  ...place,
  rules: Schema.Array(PolicyRule),
  expectedVersion: Schema.NullOr(Schema.Int)
}) {}

export class RegisterRepository extends Schema.TaggedClass<RegisterRepository>()("RegisterRepository", {
  ...place,
  repository: Schema.NonEmptyString
}) {}

export class RemoveRepository extends Schema.TaggedClass<RemoveRepository>()("RemoveRepository", {
  ...place,
  repository: Schema.NonEmptyString
}) {}

export const FleetCommand = Schema.Union(SetPolicy, RegisterRepository, RemoveRepository)
export type FleetCommand = typeof FleetCommand.Type
