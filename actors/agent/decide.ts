import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { AgentAlreadyExists, AgentBuiltIn, type AgentError, AgentNotFound, UnknownAgentTool } from "./errors.ts"
import { AgentCreated, AgentDeleted, type AgentEvent, AgentUpdated, DEFAULT_AGENT_SLUG } from "./events.ts"
import type { AgentCommand, CreateAgent, UpdateAgent } from "./protocol.ts"
import type { AgentState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<AgentEvent>, AgentError>

export const decide = (state: AgentState, command: AgentCommand, meta: CommandMeta): Decision => {
  // the default agent is the workspace assistant itself, built in: no command may make or change one under its slug
  if (command.slug === DEFAULT_AGENT_SLUG) return Either.left(new AgentBuiltIn({ slug: command.slug }))
  switch (command._tag) {
    case "CreateAgent":
      return create(state, command, meta)
    case "UpdateAgent":
      return update(state, command, meta)
    case "DeleteAgent":
      if (state._tag !== "Live") return Either.left(new AgentNotFound({ slug: command.slug }))
      return Either.right([new AgentDeleted({ workspaceId: command.workspaceId, slug: command.slug, deletedAt: meta.at })])
  }
}

/** The tools as recorded: each once, in the order first given, every one a capability of the agent surface. */
const checkedTools = (tools: ReadonlyArray<string>, agentTools: ReadonlyArray<string>): Either.Either<ReadonlyArray<string>, UnknownAgentTool> => {
  const unknown = tools.find((tool) => !agentTools.includes(tool))
  return unknown === undefined ? Either.right([...new Set(tools)]) : Either.left(new UnknownAgentTool({ tool: unknown }))
}

const create = (state: AgentState, command: CreateAgent, meta: CommandMeta): Decision => {
  if (state._tag === "Live") return Either.left(new AgentAlreadyExists({ slug: command.slug }))
  const { workspaceId, orgId, slug, name, description, instructions, tier } = command
  return Either.map(checkedTools(command.tools, command.agentTools), (tools) => [
    new AgentCreated({ workspaceId, orgId, slug, name, description, instructions, tier, tools, skills: [...new Set(command.skills)], createdAt: meta.at })
  ])
}

const sameTools = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => a.length === b.length && a.every((tool, i) => tool === b[i])

/** Only what differs from the agent as it stands is recorded: an update that changes nothing records nothing. */
const update = (state: AgentState, command: UpdateAgent, meta: CommandMeta): Decision =>
  Either.gen(function* () {
    if (state._tag !== "Live") return yield* Either.left(new AgentNotFound({ slug: command.slug }))
    const tools = command.tools === undefined ? undefined : yield* checkedTools(command.tools, command.agentTools)
    const skills = command.skills === undefined ? undefined : [...new Set(command.skills)]
    const changes = {
      ...(command.name !== undefined && command.name !== state.name ? { name: command.name } : {}),
      ...(command.description !== undefined && command.description !== state.description ? { description: command.description } : {}),
      ...(command.instructions !== undefined && command.instructions !== state.instructions ? { instructions: command.instructions } : {}),
      ...(command.tier !== undefined && command.tier !== state.tier ? { tier: command.tier } : {}),
      ...(tools !== undefined && !sameTools(tools, state.tools) ? { tools } : {}),
      ...(skills !== undefined && !sameTools(skills, state.skills) ? { skills } : {})
    }
    if (Object.keys(changes).length === 0) return []
    return [new AgentUpdated({ workspaceId: command.workspaceId, slug: command.slug, ...changes, updatedAt: meta.at })]
  })
