/** Events of the notification actor (key `notification:<notificationId>`). A published `_tag` is never renamed. */
import { Schema } from "effect"
import { Json } from "../kernel.ts"

/** Spec 2.9's kinds of notice. */
export const NotificationKind = Schema.Literal("system", "approval", "run", "member", "security")
export type NotificationKind = typeof NotificationKind.Type

/** What a person does to a notice of theirs. */
export const Mark = Schema.Literal("read", "unread", "archive", "unarchive")
export type Mark = typeof Mark.Type

/** A notice as it is created: the `notifications` row is made of these. */
export const noticeFields = {
  /** Public id, `ntf_...`. */
  notificationId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NullOr(Schema.NonEmptyString),
  /** The recipient. */
  userId: Schema.NonEmptyString,
  kind: NotificationKind,
  title: Schema.String,
  body: Schema.String,
  /** The app's route to what it is about, decided when the notice is made. */
  deepLink: Schema.NullOr(Schema.String),
  /** What it is about, e.g. `{ listingId }` for a credential needing re-authentication. */
  subject: Json,
  /** ISO 8601, the command's time. */
  createdAt: Schema.String
}

export class NotificationCreated extends Schema.TaggedClass<NotificationCreated>()("notification.created", noticeFields) {}

/**
 * The recipient marked a notice: this actor's own, or one another actor's projection writes (a
 * run's request for input), whose recipient the capability read from its row.
 */
export class NotificationMarked extends Schema.TaggedClass<NotificationMarked>()("notification.marked", {
  notificationId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  userId: Schema.NonEmptyString,
  mark: Mark,
  /** ISO 8601, the command's time. */
  at: Schema.String
}) {}

/** The email mirror of the notice was accepted by the SMTP server. */
export class NotificationEmailed extends Schema.TaggedClass<NotificationEmailed>()("notification.emailed", {
  notificationId: Schema.NonEmptyString,
  /** ISO 8601, when the server accepted it. */
  emailedAt: Schema.String
}) {}

export const NotificationEvent = Schema.Union(NotificationCreated, NotificationMarked, NotificationEmailed)
export type NotificationEvent = typeof NotificationEvent.Type
