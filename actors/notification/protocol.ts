/** Commands of the notification actor. The application checks, before marking, that the notice is the caller's. */
import { Schema, Struct } from "effect"
import { Mark, noticeFields } from "./events.ts"

export class CreateNotification extends Schema.TaggedClass<CreateNotification>()(
  "CreateNotification",
  Struct.omit(noticeFields, "createdAt")
) {}

export class MarkNotification extends Schema.TaggedClass<MarkNotification>()("MarkNotification", {
  notificationId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  /** The person marking it: the notice's recipient. */
  userId: Schema.NonEmptyString,
  mark: Mark
}) {}

export class RecordEmailed extends Schema.TaggedClass<RecordEmailed>()("RecordEmailed", {
  notificationId: Schema.NonEmptyString
}) {}

export const NotificationCommand = Schema.Union(CreateNotification, MarkNotification, RecordEmailed)
export type NotificationCommand = typeof NotificationCommand.Type
