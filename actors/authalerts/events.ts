/** Events of an organization's re-authentication alert setting (key `mcp_auth_alerts:<orgId>`). A published `_tag` is never renamed. */
import { Schema } from "effect"

/** Roles whose members hear of a credential needing re-authentication: the organization's Owners,
 * and the Admins, Members or Viewers of the credential's workspace. */
export const AlertRole = Schema.Literal("Owner", "Admin", "Member", "Viewer")
export type AlertRole = typeof AlertRole.Type

export const mcpAuthAlertsFields = {
  orgId: Schema.NonEmptyString,
  /** Whether each in-app notice is mirrored by email. */
  sendEmail: Schema.Boolean,
  roles: Schema.Array(AlertRole)
}

/** Spec 2.9's default: email on, Owners and Admins. */
export const DEFAULT_MCP_AUTH_ALERTS = { sendEmail: true, roles: ["Owner", "Admin"] as ReadonlyArray<AlertRole> }

export class McpAuthAlertsSet extends Schema.TaggedClass<McpAuthAlertsSet>()("mcp_auth_alerts.set", {
  ...mcpAuthAlertsFields,
  /** ISO 8601, the command's time. */
  at: Schema.String
}) {}

export const McpAuthAlertsEvent = Schema.Union(McpAuthAlertsSet)
export type McpAuthAlertsEvent = typeof McpAuthAlertsEvent.Type
