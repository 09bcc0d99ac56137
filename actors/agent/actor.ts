/**
 * The agent actor, key `agent:<workspaceId>.<slug>`: one workspace agent. A slug is one key, so its
 * uniqueness in the workspace is this one actor's decision.
 */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { AgentError } from "./errors.ts"
import { AgentEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { AgentCommand } from "./protocol.ts"
import { AgentState, initialAgentState } from "./state.ts"

export const AgentActor: ActorKind<AgentState, AgentCommand, AgentEvent, AgentError> = {
  kind: "agent",
  initialState: initialAgentState,
  state: AgentState,
  commands: AgentCommand,
  events: AgentEvent,
  errors: AgentError,
  decide,
  evolve,
  project
}

/** The actor id of a workspace's agent: slugs hold no dot, so the id is unambiguous. */
export const agentIdOf = (workspaceId: string, slug: string): string => `${workspaceId}.${slug}`
