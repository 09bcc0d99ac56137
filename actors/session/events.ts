/** Events of the session actor (key `session:<sessionId>`): a browser sign-in session. The cookie's
 * raw value never appears here: only its lookup id and hash. A published `_tag` is never renamed. */
import { Schema } from "effect"

export const SignInMethod = Schema.Literal("password", "sso")

export class SessionStarted extends Schema.TaggedClass<SessionStarted>()("session.started", {
  sessionId: Schema.NonEmptyString,
  userId: Schema.NonEmptyString,
  lookupId: Schema.NonEmptyString,
  secretHash: Schema.NonEmptyString,
  method: SignInMethod,
  /** For an SSO sign-in: the organization and its provider. */
  sso: Schema.NullOr(Schema.Struct({ orgId: Schema.NonEmptyString, providerId: Schema.NonEmptyString })),
  /** Whether a second factor was verified at sign-in. */
  mfa: Schema.Boolean,
  /** The person's organizations at sign-in: each records the sign-in in its audit log. */
  orgIds: Schema.Array(Schema.NonEmptyString),
  /** ISO 8601. */
  startedAt: Schema.String,
  expiresAt: Schema.String
}) {}

export class SessionEnded extends Schema.TaggedClass<SessionEnded>()("session.ended", {
  sessionId: Schema.NonEmptyString,
  endedAt: Schema.String
}) {}

export const SessionEvent = Schema.Union(SessionStarted, SessionEnded)
export type SessionEvent = typeof SessionEvent.Type
