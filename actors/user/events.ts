/** Events of the user actor (key `user:<userId>`). A published `_tag` is never renamed. Secrets
 * appear only as a password hash or a sealed (encrypted) TOTP secret. */
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

export class PasswordSet extends Schema.TaggedClass<PasswordSet>()("user.password_set", {
  userId: Schema.NonEmptyString,
  /** scrypt, with its parameters and salt (see src/Passwords.ts). */
  passwordHash: Schema.NonEmptyString
}) {}

/** A TOTP secret was issued; two-factor counts only once a code from it is confirmed. */
export class TotpEnrolmentStarted extends Schema.TaggedClass<TotpEnrolmentStarted>()("user.totp_enrolment_started", {
  userId: Schema.NonEmptyString,
  secretSealed: Schema.NonEmptyString
}) {}

export class MfaEnabled extends Schema.TaggedClass<MfaEnabled>()("user.mfa_enabled", {
  userId: Schema.NonEmptyString,
  /** ISO 8601, the command's time. */
  enabledAt: Schema.String
}) {}

export class SsoIdentityLinked extends Schema.TaggedClass<SsoIdentityLinked>()("user.sso_identity_linked", {
  userId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  providerId: Schema.NonEmptyString,
  /** The provider's `sub` for this person. */
  subject: Schema.NonEmptyString,
  linkedAt: Schema.String
}) {}

export const UserEvent = Schema.Union(UserRegistered, PasswordSet, TotpEnrolmentStarted, MfaEnabled, SsoIdentityLinked)
export type UserEvent = typeof UserEvent.Type
