/** Rejections of the models actor. */
import { Schema } from "effect"

/** An archived tier cannot be the default (nor run a turn: the resolver refuses it with this too). */
export class ModelTierArchived extends Schema.TaggedError<ModelTierArchived>()("ModelTierArchived", {
  slug: Schema.String
}) {
  override get message() {
    return `model tier '${this.slug}' is archived`
  }
}

export const ModelsError = ModelTierArchived
export type ModelsError = ModelTierArchived
