/** A skill is absent (never created, or deleted) or live with its definition and version. */
import { Schema } from "effect"
import { skillDefinition, SkillSlug } from "./events.ts"

export const LiveSkill = Schema.TaggedStruct("Live", {
  workspaceId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  slug: SkillSlug,
  ...skillDefinition,
  /** 1 on creation, +1 per update that changed something. */
  version: Schema.Int,
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type LiveSkill = typeof LiveSkill.Type

export const SkillState = Schema.Union(Schema.TaggedStruct("Absent", {}), LiveSkill)
export type SkillState = typeof SkillState.Type

export const initialSkillState: SkillState = { _tag: "Absent" }
