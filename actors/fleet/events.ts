/**
 * Events of a workspace's fleet (key `fleet:<workspaceId>`): what an Owner or workspace Admin sets
 * for the workspace's enrolled machines, which their host keys read. A published `_tag` is never
 * renamed. Each event repeats the command's time, because `evolve` sees only the event.
 */
import { Schema } from "effect"

/** One rule of a policy bundle: what the machine's agent allows or denies itself, in its own terms. */
export const PolicyRule = Schema.Struct({
  id: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(100)),
  effect: Schema.Literal("allow", "deny"),
  /** What the rule is about on the machine, e.g. `shell.exec` or `network.egress`. */
  action: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200)),
  /** What the action applies to (a path, host or pattern); every resource when absent. */
  resource: Schema.optional(Schema.String.pipe(Schema.maxLength(500)))
})
export type PolicyRule = typeof PolicyRule.Type

/** A new version of the workspace's policy bundle replaced the previous one. */
export class PolicySet extends Schema.TaggedClass<PolicySet>()("fleet.policy_set", {
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  version: Schema.Int.pipe(Schema.positive()),
  rules: Schema.Array(PolicyRule),
  at: Schema.String
}) {}

/** A repository the workspace's machines may get a Git credential for. */
export class RepositoryRegistered extends Schema.TaggedClass<RepositoryRegistered>()("fleet.repository_registered", {
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  repository: Schema.NonEmptyString,
  at: Schema.String
}) {}

/** The repository's machines get no more Git credentials for it (those given run out by themselves). */
export class RepositoryRemoved extends Schema.TaggedClass<RepositoryRemoved>()("fleet.repository_removed", {
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  repository: Schema.NonEmptyString,
  at: Schema.String
}) {}

export const FleetEvent = Schema.Union(PolicySet, RepositoryRegistered, RepositoryRemoved)
export type FleetEvent = typeof FleetEvent.Type
