/** Commands of the skill actor. The capabilities check the caller's role; time comes in the metadata. */
import { Schema } from "effect"
import { skillDefinition, SkillSlug } from "./events.ts"

const place = { workspaceId: Schema.NonEmptyString, slug: SkillSlug }

export class CreateSkill extends Schema.TaggedClass<CreateSkill>()("CreateSkill", {
  ...place,
  orgId: Schema.NonEmptyString,
  ...skillDefinition
}) {}

/** Each field given replaces the skill's; a field left out stays as it is. */
export class UpdateSkill extends Schema.TaggedClass<UpdateSkill>()("UpdateSkill", {
  ...place,
  name: Schema.optional(skillDefinition.name),
  description: Schema.optional(skillDefinition.description),
  instructions: Schema.optional(skillDefinition.instructions)
}) {}

export class DeleteSkill extends Schema.TaggedClass<DeleteSkill>()("DeleteSkill", place) {}

export const SkillCommand = Schema.Union(CreateSkill, UpdateSkill, DeleteSkill)
export type SkillCommand = typeof SkillCommand.Type
