/**
 * Workspace skills (spec 5.3's "skills"): named, versioned instructions a workspace attaches to its
 * agents (agent.create/update's `skills`), on the API, MCP and the agent surface. Mutations are
 * commands to the skill actor (`skill:<workspaceId>.<slug>`); reads list the `skills` read model.
 * Who may read and write them is as for agents: an organization key gets 403 `forbidden`.
 */
import { Effect } from "effect"
import { SkillActor, skillIdOf } from "../../actors/skill/actor.ts"
import { SkillNotFound } from "../../actors/skill/errors.ts"
import { CreateSkill, DeleteSkill, UpdateSkill } from "../../actors/skill/protocol.ts"
import type { SkillState } from "../../actors/skill/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, implement } from "../checkpoint/Capability.ts"
import * as Api from "./Api.ts"
import { skillRows } from "./Queries.ts"

const skillOf = (state: SkillState): typeof Api.Skill.Type => {
  if (state._tag !== "Live") throw new Error("a skill command succeeded without a live skill")
  const { slug, name, description, instructions, version, createdAt, updatedAt } = state
  return { slug, name, description, instructions, version, createdAt, updatedAt }
}

export const createSkill = implement(Api.createSkill, (invocation, input) =>
  Effect.gen(function* () {
    const workspaceId = invocation.workspaceId!
    const command = new CreateSkill({ workspaceId, orgId: invocation.orgId!, slug: input.slug, name: input.name, description: input.description ?? "", instructions: input.instructions })
    const { state } = yield* (yield* ActorHost).send(SkillActor, skillIdOf(workspaceId, input.slug), command, invocation.meta)
    return skillOf(state)
  })
)

export const updateSkill = implement(Api.updateSkill, (invocation, { slug, ...changes }) =>
  Effect.gen(function* () {
    const workspaceId = invocation.workspaceId!
    const { state } = yield* (yield* ActorHost).send(SkillActor, skillIdOf(workspaceId, slug), new UpdateSkill({ workspaceId, slug, ...changes }), invocation.meta)
    return skillOf(state)
  })
)

export const deleteSkill = implement(Api.deleteSkill, (invocation, { slug }) =>
  Effect.gen(function* () {
    const workspaceId = invocation.workspaceId!
    yield* (yield* ActorHost).send(SkillActor, skillIdOf(workspaceId, slug), new DeleteSkill({ workspaceId, slug }), invocation.meta)
    return { slug, deleted: true as const }
  })
)

export const getSkill = implement(Api.getSkill, (invocation, { slug }) =>
  Effect.flatMap(skillRows(invocation.workspaceId!, [slug]), ([skill]) => (skill === undefined ? Effect.fail(new SkillNotFound({ slug })) : Effect.succeed(skill)))
)

export const listSkills = implement(Api.listSkills, (invocation) => Effect.map(skillRows(invocation.workspaceId!, undefined), (skills) => ({ skills })))

export const skillCapabilities: ReadonlyArray<AnyCapability> = [createSkill, listSkills, getSkill, updateSkill, deleteSkill]
