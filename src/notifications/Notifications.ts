/**
 * A person's in-app notices in an organization (spec 2.9, 4.5): a `human_input` step waiting for
 * them (kind `run`), an automation of theirs a change disabled (kind `security`), a plugin credential
 * needing re-authentication (kind `system`), newest first.
 * Only a person reads and marks them: they are addressed to one. And the organization's
 * `mcp_auth_alerts` setting, which decides who hears of a credential needing re-authentication.
 */
import { Effect, Schema } from "effect"
import { McpAuthAlertsActor } from "../../actors/authalerts/actor.ts"
import { AlertRole } from "../../actors/authalerts/events.ts"
import { SetMcpAuthAlerts } from "../../actors/authalerts/protocol.ts"
import { Json } from "../../actors/kernel.ts"
import { NotificationActor } from "../../actors/notification/actor.ts"
import { NotificationNotFound } from "../../actors/notification/errors.ts"
import { Mark, NotificationKind } from "../../actors/notification/events.ts"
import { MarkNotification } from "../../actors/notification/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { Db, query } from "../../streams/Db.ts"
import { slugsOf } from "../identity/Auth.ts"
import { type AnyCapability, defineCapability, type Role } from "../checkpoint/Capability.ts"
import { mcpAuthAlertsOf } from "../marketplace/Notify.ts"
import { keysetPage, PageLimit, TimeIdCursor, timeId } from "../platform/Paging.ts"
import { ownRecord } from "../checkpoint/Person.ts"

const Notification = Schema.Struct({
  notificationId: Schema.String,
  kind: NotificationKind,
  workspaceId: Schema.NullOr(Schema.String),
  title: Schema.String,
  body: Schema.String,
  /** What it is about, e.g. `{ automationId, runId, index }` for an automation waiting for input. */
  subject: Json,
  /** The app's route to what it is about (spec 2.9), e.g. `/{org}/{workspace}/settings/integrations/reauth/{listing}`. */
  deepLink: Schema.NullOr(Schema.String),
  unread: Schema.Boolean,
  archived: Schema.Boolean,
  /** When its email mirror was accepted by the mail server; null: none was sent. */
  emailedAt: Schema.NullOr(Schema.String),
  createdAt: Schema.NullOr(Schema.String),
  /** When what it asked for was done (answered, expired); null while open. */
  resolvedAt: Schema.NullOr(Schema.String)
})

const iso = (value: Date | null) => (value === null ? null : value.toISOString())

/** Addressed to a person: any signed-in member reads and marks their own, never a key. */
const personal = {
  scope: "organization",
  roles: ["person"],
  requiresPerson: true,
  surfaces: ["api", "mcp"],
  sensitivity: "low",
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
} as const

/** An automation's or a run's notice is projected by its actor, which knows no slugs: its route (the
 * run's, else the automation's) is made when it is read. */
const deepLinkOf = (r: Record<string, any>) =>
  r.deep_link !== null
    ? Effect.succeed(r.deep_link as string)
    : typeof r.subject?.automationId === "string" && r.workspace_id !== null
      ? Effect.map(slugsOf(r.org_id, r.workspace_id), (place) =>
          `/${place}/automations/${r.subject.automationId}${typeof r.subject.runId === "string" ? `/runs/${r.subject.runId}` : ""}`)
      : Effect.succeed(null)

export const listNotifications = defineCapability({
  ...personal,
  name: "notifications.list",
  description:
    "List your notices in this organization, newest first: open and not archived unless `all` (also resolved ones) or `archived` (archived ones only) is true; `unread` true lists only unread ones.",
  mutating: false,
  input: Schema.Struct({
    all: Schema.optional(Schema.Boolean),
    archived: Schema.optional(Schema.Boolean),
    unread: Schema.optional(Schema.Boolean),
    limit: Schema.optional(PageLimit),
    /** `nextCursor` of the previous page. */
    cursor: Schema.optional(Schema.String)
  }),
  output: Schema.Struct({
    notifications: Schema.Array(Notification),
    nextCursor: Schema.NullOr(Schema.String),
    /** Of all the person's open notices here, not only this page's: what a bell shows. */
    unreadCount: Schema.Number
  }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const db = yield* Db
      const person = invocation.principal.attributedTo
      const read = (after: readonly [string, string] | undefined, rows: number) => query("list notifications", () => db.sql`
        select n.*, coalesce(m.unread, true) as unread, coalesce(m.archived, false) as archived
        from ${db.table("notifications")} n
        left join ${db.table("notification_marks")} m on m.notification_id = n.notification_id and m.user_id = n.user_id
        where n.org_id = ${invocation.orgId} and n.user_id = ${person}
          ${input.all === true ? db.sql`` : db.sql`and n.resolved_at is null`}
          and coalesce(m.archived, false) = ${input.archived === true}
          ${input.unread === true ? db.sql`and coalesce(m.unread, true)` : db.sql``}
          ${after === undefined ? db.sql`` : db.sql`and (n.created_at, n.notification_id) < (${new Date(after[0])}, ${after[1]})`}
        order by n.created_at desc, n.notification_id desc limit ${rows}`)
      const { page, nextCursor } = yield* keysetPage(TimeIdCursor, input, read, (last) => timeId(last.created_at as Date, last.notification_id as string))
      const [{ count }] = yield* query("count unread notifications", () => db.sql`
        select count(*)::int as count
        from ${db.table("notifications")} n
        left join ${db.table("notification_marks")} m on m.notification_id = n.notification_id and m.user_id = n.user_id
        where n.org_id = ${invocation.orgId} and n.user_id = ${person} and n.resolved_at is null
          and not coalesce(m.archived, false) and coalesce(m.unread, true)`)
      const links = yield* Effect.forEach(page, deepLinkOf)
      return {
        nextCursor,
        unreadCount: count as number,
        notifications: page.map((r, i) => ({
          notificationId: r.notification_id,
          kind: r.kind,
          workspaceId: r.workspace_id,
          title: r.title,
          body: r.body,
          subject: r.subject,
          deepLink: links[i],
          unread: r.unread,
          archived: r.archived,
          emailedAt: iso(r.emailed_at),
          createdAt: iso(r.created_at),
          resolvedAt: iso(r.resolved_at)
        }))
      }
    })
})

export const markNotification = defineCapability({
  ...personal,
  name: "notifications.mark",
  description: "Mark a notice of yours read or unread, or archive or unarchive it.",
  mutating: true,
  input: Schema.Struct({ notificationId: Schema.NonEmptyString, mark: Mark }),
  output: Schema.Struct({ notificationId: Schema.String, unread: Schema.Boolean, archived: Schema.Boolean }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const db = yield* Db
      const orgId = invocation.orgId!
      // only one's own: another person's notice is as absent as one that never was
      const { userId } = yield* ownRecord(
        invocation,
        query("find notification", () => db.sql`
          select user_id from ${db.table("notifications")} where notification_id = ${input.notificationId} and org_id = ${orgId}`)
          .pipe(Effect.map(([row]) => (row === undefined ? undefined : { userId: row.user_id as string }))),
        () => new NotificationNotFound({ notificationId: input.notificationId })
      )
      const { state } = yield* (yield* ActorHost).send(
        NotificationActor,
        input.notificationId,
        new MarkNotification({ notificationId: input.notificationId, orgId, userId, mark: input.mark }),
        invocation.meta
      )
      if (state._tag !== "Known") return yield* Effect.dieMessage("MarkNotification succeeded on an absent notification")
      return { notificationId: input.notificationId, unread: state.unread, archived: state.archived }
    })
})

const McpAuthAlerts = Schema.Struct({
  /** Whether each in-app notice is mirrored by email. */
  sendEmail: Schema.Boolean,
  /** `Owner`: the organization's Owners; `Admin`, `Member`, `Viewer`: that role in the credential's workspace. */
  roles: Schema.Array(AlertRole)
})

/** Spec 2.9's org setting; the organization's Owners keep it. */
const ownerSetting = {
  scope: "organization",
  roles: ["org:owner"] as ReadonlyArray<Role>,
  surfaces: ["api", "mcp"],
  sensitivity: "medium",
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
} as const

export const getMcpAuthAlerts = defineCapability({
  ...ownerSetting,
  name: "org.mcp_auth_alerts.get",
  description: "Who is told when a plugin credential needs re-authentication (roles), and whether by email too (sendEmail). Default: Owner and Admin, with email.",
  mutating: false,
  input: Schema.Struct({}),
  output: McpAuthAlerts,
  handler: (invocation) => mcpAuthAlertsOf(invocation.orgId!)
})

export const setMcpAuthAlerts = defineCapability({
  ...ownerSetting,
  name: "org.mcp_auth_alerts.set",
  description: "Set who is told when a plugin credential needs re-authentication (roles: Owner, Admin, Member, Viewer) and whether by email too (sendEmail).",
  mutating: true,
  input: McpAuthAlerts,
  output: McpAuthAlerts,
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const orgId = invocation.orgId!
      const { state } = yield* (yield* ActorHost).send(McpAuthAlertsActor, orgId, new SetMcpAuthAlerts({ orgId, ...input }), invocation.meta)
      if (state._tag !== "Set") return yield* Effect.dieMessage("SetMcpAuthAlerts left the setting unset")
      return { sendEmail: state.sendEmail, roles: state.roles }
    })
})

export const notificationCapabilities: ReadonlyArray<AnyCapability> = [listNotifications, markNotification, getMcpAuthAlerts, setMcpAuthAlerts]
