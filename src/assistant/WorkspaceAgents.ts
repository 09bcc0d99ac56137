/**
 * Workspace agents as turns, listings and automations read them: the `agents` read model (actor
 * `agent`), and the built-in default agent, the workspace assistant itself (slug `assistant`), which
 * no row holds: the platform's system prompt alone, every tool the caller's role allows, the
 * organization's default model tier.
 */
import { Effect } from "effect"
import { DEFAULT_AGENT_SLUG } from "../../actors/agent/events.ts"
import { agentRows, type WorkspaceAgent } from "./Queries.ts"

export const DEFAULT_AGENT: WorkspaceAgent = {
  slug: DEFAULT_AGENT_SLUG,
  name: "Workspace assistant",
  description: "Answers questions and acts in the workspace through its tools; asks when it needs a decision.",
  instructions: "",
  tier: null,
  tools: null,
  skills: [],
  builtIn: true,
  version: 0,
  createdAt: null,
  updatedAt: null
}

/** The workspace's agent with this slug (the built-in assistant for `assistant`), or undefined. */
export const findAgent = (workspaceId: string, slug: string) =>
  slug === DEFAULT_AGENT_SLUG
    ? Effect.succeed<WorkspaceAgent | undefined>(DEFAULT_AGENT)
    : Effect.map(agentRows(workspaceId, slug), (rows): WorkspaceAgent | undefined => rows[0])

/** The workspace's agents: the built-in assistant first, then the others by slug. */
export const listAgents = (workspaceId: string) => Effect.map(agentRows(workspaceId, undefined), (rows) => [DEFAULT_AGENT, ...rows])
