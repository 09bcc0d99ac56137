/**
 * The notifications wing's contracts: a person's in-app notices in an organization
 * (`notifications.*`, spec 2.9, 4.5) and the organization's `mcp_auth_alerts` setting, on the API
 * and MCP.
 */
import { Schema } from "effect"
import { AlertRole } from "../../actors/authalerts/events.ts"
import { Json } from "../../actors/kernel.ts"
import { Mark, NotificationKind } from "../../actors/notification/events.ts"
import { defineContract, type Role } from "../checkpoint/Capability.ts"
import { PageLimit } from "../platform/Paging.ts"

export const Notification = Schema.Struct({
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

export const listNotifications = defineContract({
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
  })
})

export const markNotification = defineContract({
  ...personal,
  name: "notifications.mark",
  description: "Mark a notice of yours read or unread, or archive or unarchive it.",
  mutating: true,
  input: Schema.Struct({ notificationId: Schema.NonEmptyString, mark: Mark }),
  output: Schema.Struct({ notificationId: Schema.String, unread: Schema.Boolean, archived: Schema.Boolean })
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

export const getMcpAuthAlerts = defineContract({
  ...ownerSetting,
  name: "org.mcp_auth_alerts.get",
  description: "Who is told when a plugin credential needs re-authentication (roles), and whether by email too (sendEmail). Default: Owner and Admin, with email.",
  mutating: false,
  input: Schema.Struct({}),
  output: McpAuthAlerts
})

export const setMcpAuthAlerts = defineContract({
  ...ownerSetting,
  name: "org.mcp_auth_alerts.set",
  description: "Set who is told when a plugin credential needs re-authentication (roles: Owner, Admin, Member, Viewer) and whether by email too (sendEmail).",
  mutating: true,
  input: McpAuthAlerts,
  output: McpAuthAlerts
})
