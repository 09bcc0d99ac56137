/** Rejections of the notification actor. */
import { Schema } from "effect"

/** 404 `not_found`, reason `notification_not_found`: none, or another person's. */
export class NotificationNotFound extends Schema.TaggedError<NotificationNotFound>()("NotificationNotFound", {
  notificationId: Schema.String
}) {
  override get message() {
    return `no notification ${this.notificationId} of yours`
  }
}

/** 409 `conflict`, reason `notification_exists`: the id is taken by another notice. */
export class NotificationExists extends Schema.TaggedError<NotificationExists>()("NotificationExists", {
  notificationId: Schema.String
}) {
  override get message() {
    return `notification ${this.notificationId} already exists`
  }
}

export const NotificationError = Schema.Union(NotificationNotFound, NotificationExists)
export type NotificationError = typeof NotificationError.Type
