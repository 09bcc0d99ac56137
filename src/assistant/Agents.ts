/**
 * Workspace agents (spec 2.8's `agentSlug`, 5.3's "agents"): named configurations of the assistant,
 * its instructions, model tier and tools, on the API, MCP and the agent surface. Mutations are
 * commands to the agent actor (`agent:<workspaceId>.<slug>`); reads list the `agents` read model
 * with the built-in default agent, the workspace assistant (`assistant`), first.
 *
 * Reads are for the workspace's roles and the organization's Owner: an organization key (Org
 * member, no workspace role) gets 403 `forbidden` (spec 5 rule 3). Writes are for workspace Admins
 * and Owners (docs/decisions.md), so no key writes them; the agent parks its writes for approval.
 *
 * `askAgent` runs one turn of an agent for an in-process caller (automations' `agent` step).
 */
import { packsOf } from "../packs/Entitlement.ts"
import { Effect, Schema } from "effect"
import { AgentActor, agentIdOf } from "../../actors/agent/actor.ts"
import { AgentNotFound } from "../../actors/agent/errors.ts"
import { CreateAgent, DeleteAgent, UpdateAgent } from "../../actors/agent/protocol.ts"
import type { AgentState } from "../../actors/agent/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import type { Principal } from "../checkpoint/Capability.ts"
import { type AnyCapability, Capabilities, implement, type Invocation, type Registry, type Surface } from "../checkpoint/Capability.ts"
import * as Api from "./Api.ts"
import { resolveTurnModel } from "./models/resolve.ts"
import { agentToolsFor, isAgentCapability } from "./Tools.ts"
import { findAgent, listAgents } from "./WorkspaceAgents.ts"
import { skillRows, type WorkspaceAgent } from "./Queries.ts"
import { SkillNotFound } from "../../actors/skill/errors.ts"
import { askAndAwait, CurrentAgentSlug } from "./Assistant.ts"


/** The capability names an agent may be given: the registry's on the agent surface. */
const agentCapabilityNames = (registry: Registry) => registry.all.filter(isAgentCapability).map((capability) => capability.name)

/** An agent as callers see it: with no tools named, the tools the caller's turn would be offered. */
const viewOf = (agent: WorkspaceAgent, invocation: Invocation, registry: Registry, packs: ReadonlySet<string>): typeof Api.Agent.Type => ({
  ...agent,
  tools: agent.tools ?? agentToolsFor(registry, invocation, packs).map((tool) => tool.capability.name)
})

const fromState = (state: AgentState): WorkspaceAgent => {
  if (state._tag !== "Live") throw new Error("an agent command succeeded without a live agent")
  const { slug, name, description, instructions, tier, tools, skills, version, createdAt, updatedAt } = state
  return { slug, name, description, instructions, tier, tools, skills, builtIn: false, version, createdAt, updatedAt }
}

/** A tier is refused with the turn's own 404 and 409 (spec 7.1) when no turn could run on it now. */
const checkTier = (invocation: Invocation, tier: string | null | undefined) =>
  tier === undefined || tier === null ? Effect.void : Effect.asVoid(resolveTurnModel({ orgId: invocation.orgId!, tier }))

/** Attaching names live skills of the workspace: an unknown one is 404 `skill_not_found`. */
const checkSkills = (invocation: Invocation, skills: ReadonlyArray<string> | undefined) =>
  skills === undefined || skills.length === 0
    ? Effect.void
    : Effect.flatMap(skillRows(invocation.workspaceId!, skills), (found) => {
        const missing = skills.find((slug) => !found.some((skill) => skill.slug === slug))
        return missing === undefined ? Effect.void : Effect.fail(new SkillNotFound({ slug: missing }))
      })

export const createAgent = implement(Api.createAgent, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const registry = yield* Capabilities
    const workspaceId = invocation.workspaceId!
    yield* checkTier(invocation, input.tier)
    yield* checkSkills(invocation, input.skills)
    const { state } = yield* host.send(
      AgentActor,
      agentIdOf(workspaceId, input.slug),
      new CreateAgent({
        workspaceId,
        orgId: invocation.orgId!,
        slug: input.slug,
        name: input.name,
        description: input.description ?? "",
        instructions: input.instructions ?? "",
        tier: input.tier ?? null,
        tools: input.tools ?? [],
        skills: input.skills ?? [],
        agentTools: agentCapabilityNames(registry)
      }),
      invocation.meta
    )
    return viewOf(fromState(state), invocation, registry, yield* packsOf(invocation.orgId))
  })
)

export const updateAgent = implement(Api.updateAgent, (invocation, { slug, ...changes }) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const registry = yield* Capabilities
    const workspaceId = invocation.workspaceId!
    yield* checkTier(invocation, changes.tier)
    yield* checkSkills(invocation, changes.skills)
    const { state } = yield* host.send(
      AgentActor,
      agentIdOf(workspaceId, slug),
      new UpdateAgent({ workspaceId, slug, ...changes, agentTools: agentCapabilityNames(registry) }),
      invocation.meta
    )
    return viewOf(fromState(state), invocation, registry, yield* packsOf(invocation.orgId))
  })
)

export const deleteAgent = implement(Api.deleteAgent, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const workspaceId = invocation.workspaceId!
    yield* host.send(AgentActor, agentIdOf(workspaceId, input.slug), new DeleteAgent({ workspaceId, slug: input.slug }), invocation.meta)
    return { slug: input.slug, deleted: true as const }
  })
)

export const getAgent = implement(Api.getAgent, (invocation, input) =>
  Effect.gen(function* () {
    const agent = yield* findAgent(invocation.workspaceId!, input.slug)
    if (agent === undefined) return yield* new AgentNotFound({ slug: input.slug })
    return viewOf(agent, invocation, yield* Capabilities, yield* packsOf(invocation.orgId))
  })
)

export const listWorkspaceAgents = implement(Api.listWorkspaceAgents, (invocation) =>
  Effect.gen(function* () {
    const registry = yield* Capabilities
    const agents = yield* listAgents(invocation.workspaceId!)
    const packs = yield* packsOf(invocation.orgId)
    return { agents: agents.map((agent) => viewOf(agent, invocation, registry, packs)) }
  })
)

export const agentCapabilities: ReadonlyArray<AnyCapability> = [createAgent, listWorkspaceAgents, getAgent, updateAgent, deleteAgent]

/** A turn of an agent ended in failure after it started (spec 7.2's code and reason). */
export class AgentTurnFailed extends Schema.TaggedError<AgentTurnFailed>()("AgentTurnFailed", {
  code: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String),
  message: Schema.String
}) {}

export interface AskAgentRequest {
  /** Who the turn acts for (an automation's principal); its role must grant `ask_assistant`. */
  readonly principal: Principal
  readonly path: { readonly orgSlug: string; readonly workspaceSlug: string }
  /** The surface the checkpoint records; `ask_assistant` must list it. */
  readonly surface: Surface
  /** `assistant` runs the built-in assistant; an unknown slug fails with `AgentNotFound`. */
  readonly agentSlug: string
  readonly content: string
  /** The model tier (spec 2.2's `tier`); the agent's, else the organization's default, when omitted. */
  readonly tier?: string
}

/**
 * One turn of a workspace agent in a new conversation, as the ask route runs a turn: `ask_assistant`
 * through the checkpoint (audit, metering, spend and rate checks as for any turn), waiting for its
 * end. Succeeds with the turn result (spec 2.3); fails with the checkpoint's refusals (7.1), or
 * `AgentTurnFailed` when the turn failed after it started (7.2).
 */
export const askAgent = (request: AskAgentRequest) =>
  askAndAwait({
    authorization: undefined,
    principal: request.principal,
    surface: request.surface,
    capability: "ask_assistant",
    path: request.path,
    input: Effect.succeed(request.tier === undefined ? { content: request.content } : { content: request.content, tier: request.tier })
  }).pipe(
    Effect.locally(CurrentAgentSlug, request.agentSlug),
    Effect.flatMap((outcome) => ("result" in outcome ? Effect.succeed(outcome.result) : Effect.fail(new AgentTurnFailed(outcome.failure))))
  )
