/**
 * Commands of the agent actor. The capabilities check the caller's role and the model tier; the
 * registry's agent-surface capability names ride in the command (`agentTools`), so the decider
 * decides which tools an agent may be given.
 */
import { Schema } from "effect"
import { agentDefinition, AgentSkills, AgentSlug, attachedSkills } from "./events.ts"

const place = { workspaceId: Schema.NonEmptyString, slug: AgentSlug }

/** The capabilities an agent's turns can be offered: the registry's on the agent surface. */
const agentTools = Schema.Array(Schema.String)

export class CreateAgent extends Schema.TaggedClass<CreateAgent>()("CreateAgent", {
  ...place,
  orgId: Schema.NonEmptyString,
  ...agentDefinition,
  skills: attachedSkills,
  agentTools
}) {}

/** Each field given replaces the agent's; a field left out stays as it is. */
export class UpdateAgent extends Schema.TaggedClass<UpdateAgent>()("UpdateAgent", {
  ...place,
  name: Schema.optional(agentDefinition.name),
  description: Schema.optional(agentDefinition.description),
  instructions: Schema.optional(agentDefinition.instructions),
  tier: Schema.optional(agentDefinition.tier),
  tools: Schema.optional(agentDefinition.tools),
  skills: Schema.optional(AgentSkills),
  agentTools
}) {}

export class DeleteAgent extends Schema.TaggedClass<DeleteAgent>()("DeleteAgent", place) {}

export const AgentCommand = Schema.Union(CreateAgent, UpdateAgent, DeleteAgent)
export type AgentCommand = typeof AgentCommand.Type
