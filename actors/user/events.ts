/** Events of the user actor (key `user:<userId>`). A published `_tag` is never renamed. */
import { Schema } from "effect"

/** Lowercased so that the unique `users.email` index treats case variants as one address. */
export const Email = Schema.String.pipe(Schema.lowercased(), Schema.pattern(/^[^\s@]+@[^\s@]+$/))

export class UserRegistered extends Schema.TaggedClass<UserRegistered>()("user.registered", {
  userId: Schema.NonEmptyString,
  email: Email,
  name: Schema.NonEmptyTrimmedString,
  /** ISO 8601, the command's time. */
  createdAt: Schema.String
}) {}

export const UserEvent = UserRegistered
export type UserEvent = UserRegistered
