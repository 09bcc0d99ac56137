/**
 * Events of the agent actor (key `agent:<workspaceId>.<slug>`): one workspace agent, a named
 * configuration of the assistant (its instructions, model tier and tools) that automations' `agent`
 * steps and A2A callers address by slug. A published `_tag` is never renamed.
 */
import { Schema } from "effect"
import { ModelTierSlug } from "../models/events.ts"

/** Lowercase letters and digits, with single hyphens between them; at most 63 characters. */
export const AgentSlug = Schema.String.pipe(
  Schema.pattern(/^(?=.{1,63}$)[a-z0-9]+(?:-[a-z0-9]+)*$/, {
    message: () => "an agent slug is 1 to 63 lowercase letters and digits, with single hyphens between them"
  })
)

/** The slug of the built-in default agent, the workspace assistant: no actor holds it. */
export const DEFAULT_AGENT_SLUG = "assistant"

/** What a workspace agent is made of, beside its place and slug. */
export const agentDefinition = {
  name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(100)),
  /** Shown to people and A2A callers; the model never sees it. */
  description: Schema.String.pipe(Schema.maxLength(500)),
  /** Joins the system prompt of the agent's turns. */
  instructions: Schema.String.pipe(Schema.maxLength(8000)),
  /** A model tier slug for turns that name none; null: the organization's default tier. */
  tier: Schema.NullOr(ModelTierSlug),
  /** The capability names (agent surface) its turns are offered, in the order given, each once. */
  tools: Schema.Array(Schema.NonEmptyString)
}

const changed = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** The slugs of the workspace skills attached to an agent, in order, each once (same rule as agent slugs). */
export const AgentSkills = Schema.Array(AgentSlug).pipe(Schema.maxItems(20))
/** An agent recorded before skills existed has none. */
export const attachedSkills = Schema.optionalWith(AgentSkills, { default: () => [] })

export class AgentCreated extends Schema.TaggedClass<AgentCreated>()("agent.created", {
  workspaceId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  slug: AgentSlug,
  ...agentDefinition,
  skills: attachedSkills,
  /** ISO 8601, the command's time. */
  createdAt: Schema.String
}) {}

/** Only the fields that changed, with their new values. */
export class AgentUpdated extends Schema.TaggedClass<AgentUpdated>()("agent.updated", {
  workspaceId: Schema.NonEmptyString,
  slug: AgentSlug,
  name: changed(agentDefinition.name),
  description: changed(agentDefinition.description),
  instructions: changed(agentDefinition.instructions),
  tier: changed(agentDefinition.tier),
  tools: changed(agentDefinition.tools),
  skills: changed(AgentSkills),
  updatedAt: Schema.String
}) {}

/** The slug is free again: a later create starts a new agent under it. */
export class AgentDeleted extends Schema.TaggedClass<AgentDeleted>()("agent.deleted", {
  workspaceId: Schema.NonEmptyString,
  slug: AgentSlug,
  deletedAt: Schema.String
}) {}

export const AgentEvent = Schema.Union(AgentCreated, AgentUpdated, AgentDeleted)
export type AgentEvent = typeof AgentEvent.Type
