/** Rejections of the user actor. */
import { Schema } from "effect"

export class UserAlreadyRegistered extends Schema.TaggedError<UserAlreadyRegistered>()("UserAlreadyRegistered", {
  userId: Schema.String
}) {
  override get message() {
    return `user ${this.userId} is already registered`
  }
}

export class UserNotFound extends Schema.TaggedError<UserNotFound>()("UserNotFound", {
  userId: Schema.String
}) {
  override get message() {
    return `user ${this.userId} does not exist`
  }
}

/** A confirmation for a TOTP secret that is not the one pending. */
export class NoPendingTotp extends Schema.TaggedError<NoPendingTotp>()("NoPendingTotp", {
  userId: Schema.String
}) {
  override get message() {
    return "no two-factor enrolment is pending; start one first"
  }
}

/** The subject is already linked to this person under another provider subject. */
export class SsoIdentityConflict extends Schema.TaggedError<SsoIdentityConflict>()("SsoIdentityConflict", {
  userId: Schema.String,
  providerId: Schema.String
}) {
  override get message() {
    return `user ${this.userId} is linked to another identity at provider ${this.providerId}`
  }
}

export const UserError = Schema.Union(UserAlreadyRegistered, UserNotFound, NoPendingTotp, SsoIdentityConflict)
export type UserError = typeof UserError.Type
