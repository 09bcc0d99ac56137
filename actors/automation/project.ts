/** Read models: `automations`, one row per live automation (migrations 0012, 0021), the skipped
 * ticks among `automation_runs`, and a change that disabled it: the owner's notice and its security
 * record in the audit log. */
import { securityAuditRow } from "../audit/security.ts"
import type { EventContext, Json, RowOp } from "../kernel.ts"
import type { AutomationEvent } from "./events.ts"
import { type AutomationState, enablerOf } from "./state.ts"

export const project = (after: AutomationState, event: AutomationEvent, ctx: EventContext): ReadonlyArray<RowOp> => {
  if (event._tag === "automation.deleted") {
    return [{ op: "delete", table: "automations", pk: ["automation_id"], row: { automation_id: event.automationId } }]
  }
  if (after._tag !== "Live") return []
  // admitting an event's or a call's run changes nothing the row holds (the run has its own)
  if (event._tag === "automation.run_admitted" && event.tick === null) return []
  const rows: Array<RowOp> = [
    {
      op: "upsert",
      table: "automations",
      pk: ["automation_id"],
      row: {
        automation_id: after.automationId,
        org_id: after.orgId,
        workspace_id: after.workspaceId,
        name: after.name,
        description: after.description,
        trigger_type: after.trigger.type,
        // what the event reaction looks automations up by
        entity_type: after.trigger.type === "event" ? after.trigger.entityType : null,
        event_type: after.trigger.type === "event" ? after.trigger.eventType : null,
        trigger: after.trigger as unknown as Json,
        steps: after.steps as unknown as Json,
        enabled: after.enabled,
        live_since: after.liveSince,
        origin: after.origin,
        run_as: after.runAs as unknown as Json,
        created_at: after.createdAt,
        updated_at: after.updatedAt,
        version: after.version,
        revision: after.revision,
        // whom its runs act for now
        enabled_by: enablerOf(after),
        enabled_revision: after.enabledRevision,
        last_tick: after.lastTick,
        active_scheduled_run: after.activeScheduledRun
      }
    }
  ]
  if (event._tag === "automation.tick_skipped") {
    rows.push({
      op: "insert",
      table: "automation_runs",
      pk: ["run_id"],
      row: {
        run_id: event.runId,
        automation_id: after.automationId,
        org_id: after.orgId,
        workspace_id: after.workspaceId,
        status: "skipped",
        trigger: { type: "schedule", tick: event.tick },
        steps: [],
        error: { code: "previous_run_active", message: `the tick came while run ${event.activeRunId} was still active` },
        created_at: ctx.at,
        started_at: null,
        ended_at: ctx.at
      }
    })
  }
  if (event._tag === "automation.held") {
    // who changed it (the event's actor: the key, the login) in the organization audit log
    rows.push(securityAuditRow(ctx, { orgId: after.orgId, workspaceId: after.workspaceId, event: event._tag, detail: { automationId: after.automationId, revision: after.revision } }))
    rows.push({
      op: "upsert",
      table: "notifications",
      pk: ["notification_id"],
      row: {
        notification_id: `${after.automationId}:held:${after.revision}`,
        org_id: after.orgId,
        workspace_id: after.workspaceId,
        user_id: after.runAs.userId,
        kind: "security",
        title: `An automation was changed and is disabled until a person enables it: ${after.name}`,
        body: "Its trigger or steps were changed through a key, MCP or the assistant, so it stopped running. Review the change, then enable it if it should run.",
        subject: { automationId: after.automationId, revision: after.revision, changedBy: event.by },
        created_at: event.at,
        resolved_at: null,
        // as a run's notice: the route needs the slugs, which `notifications.list` finds when it reads it
        deep_link: null,
        emailed_at: null
      }
    })
  }
  return rows
}
