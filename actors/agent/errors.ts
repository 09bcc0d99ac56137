/** Rejections of the agent actor; gateway/errors.ts gives each its status, code and reason. */
import { Schema } from "effect"

/** 409 `agent_exists`: a live agent of the workspace has the slug. */
export class AgentAlreadyExists extends Schema.TaggedError<AgentAlreadyExists>()("AgentAlreadyExists", {
  slug: Schema.String
}) {
  override get message() {
    return `an agent '${this.slug}' already exists in this workspace`
  }
}

/** 404 `agent_not_found`: no live agent of the workspace has the slug. */
export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", {
  slug: Schema.String
}) {
  override get message() {
    return `no agent '${this.slug}' in this workspace`
  }
}

/** 409 `agent_builtin`: the slug is the built-in default agent's, which is not created, changed or deleted. */
export class AgentBuiltIn extends Schema.TaggedError<AgentBuiltIn>()("AgentBuiltIn", {
  slug: Schema.String
}) {
  override get message() {
    return `'${this.slug}' is the workspace's built-in assistant: it cannot be created, changed or deleted`
  }
}

/** 400 `unknown_tool`: a tool that is no capability of the agent surface. */
export class UnknownAgentTool extends Schema.TaggedError<UnknownAgentTool>()("UnknownAgentTool", {
  tool: Schema.String
}) {
  override get message() {
    return `'${this.tool}' is not a capability an agent can use`
  }
}

export const AgentError = Schema.Union(AgentAlreadyExists, AgentNotFound, AgentBuiltIn, UnknownAgentTool)
export type AgentError = typeof AgentError.Type
