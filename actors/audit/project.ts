/** Read models: `audit_log` and `metering`, append-only. */
import type { EventContext, RowOp } from "../kernel.ts"
import { securityAuditRow } from "./security.ts"
import type { AuditEvent } from "./events.ts"

export const project = (_after: null, event: AuditEvent, ctx: EventContext): ReadonlyArray<RowOp> => {
  if (event._tag === "auth.sign_in_failed") {
    const detail = { email: event.email, reason: event.reason }
    return event.orgIds.map((orgId) => securityAuditRow(ctx, { orgId, workspaceId: null, event: event._tag, detail, userId: event.userId }))
  }
  if (event._tag === "person.erased") {
    const detail = { erasureId: event.erasureId, keysDestroyed: event.keysDestroyed }
    return event.orgIds.map((orgId) => securityAuditRow(ctx, { orgId, workspaceId: null, event: event._tag, detail, userId: event.userId }))
  }
  const pk = ["invocation_id"]
  const common = {
    invocation_id: event.invocationId,
    at: ctx.at,
    org_id: event.orgId,
    workspace_id: event.workspaceId,
    capability: event.capability
  }
  return [
    {
      op: "insert",
      table: "audit_log",
      pk,
      row: {
        ...common,
        // every audit_log row carries every column: the projector batches rows of one table by their first row's columns
        kind: "capability",
        event: null,
        detail: null,
        surface: event.surface,
        principal_kind: event.principal.kind,
        api_key_id: event.principal.apiKeyId,
        user_id: event.principal.userId,
        outcome: event.outcome,
        error_tag: event.errorTag ?? null,
        duration_ms: event.durationMs
      }
    },
    { op: "insert", table: "metering", pk, row: { ...common, units: event.units } }
  ]
}
