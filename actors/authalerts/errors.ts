/** Rejections of the alert setting. */
import { Schema } from "effect"

/** 400 `bad_request`, reason `alert_roles_required`: nobody would hear of a credential that stopped working. */
export class NoAlertRoles extends Schema.TaggedError<NoAlertRoles>()("NoAlertRoles", {}) {
  override get message() {
    return "name at least one role to alert: with none, nobody would hear that a plugin credential stopped working"
  }
}

export const McpAuthAlertsError = NoAlertRoles
export type McpAuthAlertsError = NoAlertRoles
