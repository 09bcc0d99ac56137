/**
 * Read models (migration 0016): the notice itself in `notifications` (the same columns as the run
 * notices `automation_run` projects there, so one batch can write both), and the recipient's marks
 * in `notification_marks`, for this actor's notices and for notices other actors project.
 */
import type { RowOp } from "../kernel.ts"
import type { NotificationEvent } from "./events.ts"
import type { NotificationState } from "./state.ts"

export const project = (after: NotificationState, event: NotificationEvent): ReadonlyArray<RowOp> => {
  if (after._tag === "Absent") return []
  if (event._tag === "notification.marked") {
    return [{
      op: "upsert",
      table: "notification_marks",
      pk: ["notification_id"],
      row: { notification_id: after.notificationId, user_id: after.userId, unread: after.unread, archived: after.archived, marked_at: after.markedAt }
    }]
  }
  const notice = after.notice
  if (notice === null) return []
  return [{
    op: "upsert",
    table: "notifications",
    pk: ["notification_id"],
    row: {
      notification_id: after.notificationId,
      org_id: after.orgId,
      workspace_id: notice.workspaceId,
      user_id: after.userId,
      kind: notice.kind,
      title: notice.title,
      body: notice.body,
      subject: notice.subject,
      created_at: notice.createdAt,
      resolved_at: null,
      deep_link: notice.deepLink,
      emailed_at: after.emailedAt
    }
  }]
}
