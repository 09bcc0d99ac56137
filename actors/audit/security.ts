/**
 * Security events (key creation, rotation and revocation, sign-ins, failed sign-ins, ...) share the
 * organization audit log with capability invocations. Each actor's projection adds the audit row
 * for its own security events with this helper; the row id is the event's place in the log.
 */
import type { EventContext, Json, RowOp } from "../kernel.ts"

/** Who caused the event, read from its `actor` (`user:<id>`, `key:<id>` or `system`). */
const causedBy = (actor: string) => {
  const colon = actor.indexOf(":")
  const kind = colon === -1 ? actor : actor.slice(0, colon)
  const id = colon === -1 ? null : actor.slice(colon + 1)
  return { principal_kind: kind, user_id: kind === "user" ? id : null, api_key_id: kind === "key" ? id : null }
}

export interface SecurityRecord {
  readonly orgId: string
  readonly workspaceId: string | null
  readonly event: string
  readonly detail: Readonly<Record<string, Json>>
  /** Set when the event is about a person other than the one who caused it (a failed sign-in). */
  readonly userId?: string | null
  /** `playbook` for the events of an automation's runs (spec 6.3.2); `security` otherwise. */
  readonly kind?: "security" | "playbook"
}

export const securityAuditRow = (ctx: EventContext, record: SecurityRecord): RowOp => {
  const by = causedBy(ctx.actor)
  return {
    op: "insert",
    table: "audit_log",
    pk: ["invocation_id"],
    row: {
      invocation_id: `${ctx.key}#${ctx.seq}#${record.orgId}`,
      at: ctx.at,
      kind: record.kind ?? "security",
      event: record.event,
      org_id: record.orgId,
      workspace_id: record.workspaceId,
      capability: null,
      surface: record.kind === "playbook" ? "playbook" : null,
      principal_kind: by.principal_kind,
      api_key_id: by.api_key_id,
      user_id: record.userId === undefined ? by.user_id : record.userId,
      outcome: null,
      error_tag: null,
      duration_ms: null,
      detail: record.detail
    }
  }
}
