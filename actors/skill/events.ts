/**
 * Events of the skill actor (key `skill:<workspaceId>.<slug>`): one skill, a named, versioned set of
 * instructions a workspace attaches to its agents. A published `_tag` is never renamed.
 */
import { Schema } from "effect"
import { AgentSlug } from "../agent/events.ts"

/** A skill's slug follows an agent slug's rule: lowercase letters and digits, single hyphens. */
export const SkillSlug = AgentSlug

/** What a skill is made of, beside its place, slug and version. */
export const skillDefinition = {
  name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(100)),
  /** Shown to people; the model never sees it. */
  description: Schema.String.pipe(Schema.maxLength(500)),
  /** Joins the system prompt of the turns of every agent it is attached to. */
  instructions: Schema.NonEmptyString.pipe(Schema.maxLength(8000))
}

const place = { workspaceId: Schema.NonEmptyString, slug: SkillSlug }
const changed = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

export class SkillCreated extends Schema.TaggedClass<SkillCreated>()("skill.created", {
  ...place,
  orgId: Schema.NonEmptyString,
  ...skillDefinition,
  createdAt: Schema.String
}) {}

/** Only the fields that changed, with their new values; each one is a new version. */
export class SkillUpdated extends Schema.TaggedClass<SkillUpdated>()("skill.updated", {
  ...place,
  name: changed(skillDefinition.name),
  description: changed(skillDefinition.description),
  instructions: changed(skillDefinition.instructions),
  updatedAt: Schema.String
}) {}

/** The slug is free again: a later create starts a new skill under it, at version 1. */
export class SkillDeleted extends Schema.TaggedClass<SkillDeleted>()("skill.deleted", {
  ...place,
  deletedAt: Schema.String
}) {}

export const SkillEvent = Schema.Union(SkillCreated, SkillUpdated, SkillDeleted)
export type SkillEvent = typeof SkillEvent.Type
