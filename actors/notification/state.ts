/**
 * A notice is absent, or known with its recipient and marks. `notice` holds the notice itself when
 * this actor created it; null when the notice is another actor's (a run's request for input) and
 * only its marks live here.
 */
import { Schema, Struct } from "effect"
import { noticeFields } from "./events.ts"

export const Notice = Schema.Struct(Struct.omit(noticeFields, "notificationId", "orgId", "userId"))
export type Notice = typeof Notice.Type

export const NotificationState = Schema.Union(
  Schema.TaggedStruct("Absent", {}),
  Schema.TaggedStruct("Known", {
    notificationId: Schema.String,
    orgId: Schema.String,
    userId: Schema.String,
    notice: Schema.NullOr(Notice),
    unread: Schema.Boolean,
    archived: Schema.Boolean,
    /** ISO 8601 of the last mark; null while never marked. */
    markedAt: Schema.NullOr(Schema.String),
    emailedAt: Schema.NullOr(Schema.String)
  })
)
export type NotificationState = typeof NotificationState.Type

export const initialNotificationState: NotificationState = { _tag: "Absent" }
