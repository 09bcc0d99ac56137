/**
 * The notifications wing's SQL: its read models `notifications` and `notification_marks`
 * (projected from the `notification` actor and the actors that notify).
 */
import { Effect } from "effect"
import type { Json } from "../../actors/kernel.ts"
import type { NotificationKind } from "../../actors/notification/events.ts"
import { Db, query } from "../../streams/Db.ts"

/** A notice with the person's marks on it. */
export interface NotificationRow {
  readonly notificationId: string
  readonly orgId: string
  readonly userId: string
  readonly kind: NotificationKind
  readonly workspaceId: string | null
  readonly title: string
  readonly body: string
  readonly subject: Json
  /** Null: its route is made when it is read. */
  readonly deepLink: string | null
  readonly unread: boolean
  readonly archived: boolean
  readonly emailedAt: Date | null
  readonly createdAt: Date
  readonly resolvedAt: Date | null
}

const toNotification = (r: Record<string, any>): NotificationRow => ({
  notificationId: r.notification_id,
  orgId: r.org_id,
  userId: r.user_id,
  kind: r.kind,
  workspaceId: r.workspace_id,
  title: r.title,
  body: r.body,
  subject: r.subject,
  deepLink: r.deep_link,
  unread: r.unread,
  archived: r.archived,
  emailedAt: r.emailed_at,
  createdAt: r.created_at,
  resolvedAt: r.resolved_at
})

export interface NotificationFilter {
  /** Resolved ones too. */
  readonly all: boolean
  /** Archived ones only (else not archived ones only). */
  readonly archived: boolean
  /** Unread ones only. */
  readonly unread: boolean
}

/** Up to `rows` of the person's notices in the organization that pass the filter, after the
 * position `after` (creation time, id), newest first. */
export const notificationsAfter = (orgId: string, userId: string, filter: NotificationFilter, after: readonly [string, string] | undefined, rows: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const found = yield* query("list notifications", () => db.sql`
      select n.*, coalesce(m.unread, true) as unread, coalesce(m.archived, false) as archived
      from ${db.table("notifications")} n
      left join ${db.table("notification_marks")} m on m.notification_id = n.notification_id and m.user_id = n.user_id
      where n.org_id = ${orgId} and n.user_id = ${userId}
        ${filter.all ? db.sql`` : db.sql`and n.resolved_at is null`}
        and coalesce(m.archived, false) = ${filter.archived}
        ${filter.unread ? db.sql`and coalesce(m.unread, true)` : db.sql``}
        ${after === undefined ? db.sql`` : db.sql`and (n.created_at, n.notification_id) < (${new Date(after[0])}, ${after[1]})`}
      order by n.created_at desc, n.notification_id desc limit ${rows}`)
    return found.map(toNotification)
  })

/** How many of the person's open, not archived notices in the organization are unread. */
export const unreadNotificationCount = (orgId: string, userId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [{ count }] = yield* query("count unread notifications", () => db.sql`
      select count(*)::int as count
      from ${db.table("notifications")} n
      left join ${db.table("notification_marks")} m on m.notification_id = n.notification_id and m.user_id = n.user_id
      where n.org_id = ${orgId} and n.user_id = ${userId} and n.resolved_at is null
        and not coalesce(m.archived, false) and coalesce(m.unread, true)`)
    return count as number
  })

/** Whom a notice of the organization is addressed to, if there is one. */
export const notificationOwner = (notificationId: string, orgId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("find notification", () => db.sql`
      select user_id from ${db.table("notifications")} where notification_id = ${notificationId} and org_id = ${orgId}`)
    return row === undefined ? undefined : { userId: row.user_id as string }
  })
