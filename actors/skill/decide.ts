import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { SkillAlreadyExists, type SkillError, SkillNotFound } from "./errors.ts"
import { SkillCreated, SkillDeleted, type SkillEvent, SkillUpdated } from "./events.ts"
import type { SkillCommand, UpdateSkill } from "./protocol.ts"
import type { LiveSkill, SkillState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<SkillEvent>, SkillError>

export const decide = (state: SkillState, command: SkillCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "CreateSkill": {
      if (state._tag === "Live") return Either.left(new SkillAlreadyExists({ slug: command.slug }))
      const { _tag, ...fields } = command
      return Either.right([new SkillCreated({ ...fields, createdAt: meta.at })])
    }
    case "UpdateSkill":
      if (state._tag !== "Live") return Either.left(new SkillNotFound({ slug: command.slug }))
      return Either.right(update(state, command, meta))
    case "DeleteSkill":
      if (state._tag !== "Live") return Either.left(new SkillNotFound({ slug: command.slug }))
      return Either.right([new SkillDeleted({ workspaceId: command.workspaceId, slug: command.slug, deletedAt: meta.at })])
  }
}

/** Only what differs is recorded: an update that changes nothing records nothing and keeps the version. */
const update = (state: LiveSkill, command: UpdateSkill, meta: CommandMeta): ReadonlyArray<SkillEvent> => {
  const changes = Object.fromEntries(
    (["name", "description", "instructions"] as const).filter((field) => command[field] !== undefined && command[field] !== state[field]).map((field) => [field, command[field]])
  )
  if (Object.keys(changes).length === 0) return []
  return [new SkillUpdated({ workspaceId: command.workspaceId, slug: command.slug, ...changes, updatedAt: meta.at })]
}
