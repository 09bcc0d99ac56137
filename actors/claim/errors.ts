import { Schema } from "effect"

export class NameTaken extends Schema.TaggedError<NameTaken>()("NameTaken", {
  namespace: Schema.String,
  value: Schema.String
}) {
  override get message() {
    return `${this.namespace} ${this.value} is already taken`
  }
}

export const ClaimError = NameTaken
export type ClaimError = NameTaken
