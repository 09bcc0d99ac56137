/** Rejections of the user actor. */
import { Schema } from "effect"

export class UserAlreadyRegistered extends Schema.TaggedError<UserAlreadyRegistered>()("UserAlreadyRegistered", {
  userId: Schema.String
}) {
  override get message() {
    return `user ${this.userId} is already registered`
  }
}

export const UserError = UserAlreadyRegistered
export type UserError = UserAlreadyRegistered
