/** An agent is absent (never created, or deleted) or live with its whole definition. */
import { Schema } from "effect"
import { agentDefinition, AgentSlug, attachedSkills } from "./events.ts"

export const LiveAgent = Schema.TaggedStruct("Live", {
  workspaceId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  slug: AgentSlug,
  ...agentDefinition,
  skills: attachedSkills,
  /** 1 on creation, +1 per update that changed something. */
  version: Schema.Int,
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type LiveAgent = typeof LiveAgent.Type

export const AgentState = Schema.Union(Schema.TaggedStruct("Absent", {}), LiveAgent)
export type AgentState = typeof AgentState.Type

export const initialAgentState: AgentState = { _tag: "Absent" }
