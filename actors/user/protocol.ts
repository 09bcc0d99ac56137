/** Commands of the user actor. Ids, hashes and sealed secrets come from the application; a TOTP
 * code is checked by the application against the pending secret before `ConfirmTotp` is sent. */
import { Schema } from "effect"
import { Email } from "./events.ts"

export class RegisterUser extends Schema.TaggedClass<RegisterUser>()("RegisterUser", {
  userId: Schema.NonEmptyString,
  email: Email,
  name: Schema.NonEmptyTrimmedString
}) {}

export class SetPassword extends Schema.TaggedClass<SetPassword>()("SetPassword", {
  userId: Schema.NonEmptyString,
  passwordHash: Schema.NonEmptyString
}) {}

export class StartTotpEnrolment extends Schema.TaggedClass<StartTotpEnrolment>()("StartTotpEnrolment", {
  userId: Schema.NonEmptyString,
  secretSealed: Schema.NonEmptyString
}) {}

/** The pending secret (named, so a stale confirmation cannot enable a newer secret). */
export class ConfirmTotp extends Schema.TaggedClass<ConfirmTotp>()("ConfirmTotp", {
  userId: Schema.NonEmptyString,
  secretSealed: Schema.NonEmptyString
}) {}

export class LinkSsoIdentity extends Schema.TaggedClass<LinkSsoIdentity>()("LinkSsoIdentity", {
  userId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  providerId: Schema.NonEmptyString,
  subject: Schema.NonEmptyString
}) {}

export const UserCommand = Schema.Union(RegisterUser, SetPassword, StartTotpEnrolment, ConfirmTotp, LinkSsoIdentity)
export type UserCommand = typeof UserCommand.Type
