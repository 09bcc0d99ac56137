/**
 * The skill actor, key `skill:<workspaceId>.<slug>`: one workspace skill. A slug is one key, so its
 * uniqueness in the workspace is this one actor's decision.
 */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { SkillError } from "./errors.ts"
import { SkillEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { SkillCommand } from "./protocol.ts"
import { initialSkillState, SkillState } from "./state.ts"

export const SkillActor: ActorKind<SkillState, SkillCommand, SkillEvent, SkillError> = {
  kind: "skill",
  initialState: initialSkillState,
  state: SkillState,
  commands: SkillCommand,
  events: SkillEvent,
  errors: SkillError,
  decide,
  evolve,
  project
}

/** The actor id of a workspace's skill: slugs hold no dot, so the id is unambiguous. */
export const skillIdOf = (workspaceId: string, slug: string): string => `${workspaceId}.${slug}`
