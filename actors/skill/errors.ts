/** Rejections of the skill actor; gateway/errors.ts gives each its status, code and reason. */
import { Schema } from "effect"

/** 409 `skill_exists`: a live skill of the workspace has the slug. */
export class SkillAlreadyExists extends Schema.TaggedError<SkillAlreadyExists>()("SkillAlreadyExists", {
  slug: Schema.String
}) {
  override get message() {
    return `a skill '${this.slug}' already exists in this workspace`
  }
}

/** 404 `skill_not_found`: no live skill of the workspace has the slug. */
export class SkillNotFound extends Schema.TaggedError<SkillNotFound>()("SkillNotFound", {
  slug: Schema.String
}) {
  override get message() {
    return `no skill '${this.slug}' in this workspace`
  }
}

export const SkillError = Schema.Union(SkillAlreadyExists, SkillNotFound)
export type SkillError = typeof SkillError.Type
