/**
 * Read models (migration 0012): `automation_runs`, one row per run with its step timeline; the
 * run's playbook events in the organization audit log (kind and surface `playbook`, spec 6.3.2);
 * and the in-app notice of a `human_input` step, or of a call parked for approval, in `notifications`.
 */
import { securityAuditRow } from "../audit/security.ts"
import type { EventContext, Json, RowOp } from "../kernel.ts"
import type { AutomationRunEvent } from "./events.ts"
import type { AutomationRunState, Run } from "./state.ts"

export const runRow = (run: Run): Readonly<Record<string, Json>> => ({
  run_id: run.runId,
  automation_id: run.automationId,
  org_id: run.orgId,
  workspace_id: run.workspaceId,
  status: run.status,
  trigger: run.trigger as unknown as Json,
  steps: run.timeline as unknown as Json,
  error: run.error,
  created_at: run.startedAt,
  started_at: run.startedAt,
  ended_at: run.endedAt
})

/** What the audit log says of a playbook event: where it belongs, never a step's output. */
const auditDetail = (run: Run, event: AutomationRunEvent): Readonly<Record<string, Json>> => {
  const detail: Record<string, Json> = { automationId: run.automationId, runId: run.runId }
  if ("index" in event) {
    detail.step = run.steps[event.index]?.name ?? null
    detail.index = event.index
  }
  if ("attempt" in event) detail.attempt = event.attempt
  if (event._tag === "automation_run.started") {
    const trigger = event.trigger
    detail.trigger = trigger.type === "event"
      ? { type: "event", eventType: trigger.eventType, nodeId: trigger.nodeId }
      : trigger.type === "schedule" ? { type: "schedule", tick: trigger.tick } : { type: "api" }
  }
  if (event._tag === "automation_run.step_failed" || event._tag === "automation_run.failed") detail.error = event.error
  if (event._tag === "automation_run.input_received") detail.respondent = event.respondent
  if (event._tag === "automation_run.approval_requested") detail.capability = event.capability
  if (event._tag === "automation_run.approval_resolved") detail.decision = event.decision
  return detail
}

/** A parked call's input as its notice quotes it: sealed (actors/personal.ts), as it is, for the read to open; else its JSON, cut. */
const noticeOf = (input: Json): string => (typeof input === "string" ? input : JSON.stringify(input).slice(0, 500))

export const project = (after: AutomationRunState, event: AutomationRunEvent, ctx: EventContext): ReadonlyArray<RowOp> => {
  if (after._tag !== "Run") return []
  const rows: Array<RowOp> = [
    { op: "upsert", table: "automation_runs", pk: ["run_id"], row: runRow(after) },
    securityAuditRow(ctx, {
      orgId: after.orgId,
      workspaceId: after.workspaceId,
      event: event._tag,
      detail: auditDetail(after, event),
      userId: after.runAs.userId,
      kind: "playbook"
    })
  ]
  // the notice of a step's wait for a person (input, or approval of a call), resolved once answered
  // or once the step failed (expired, denied)
  if (
    event._tag === "automation_run.input_requested" || event._tag === "automation_run.input_received" ||
    event._tag === "automation_run.approval_requested" || event._tag === "automation_run.approval_resolved" ||
    event._tag === "automation_run.step_failed"
  ) {
    const record = after.timeline.findLast((r) => r.index === event.index && r.attempt === event.attempt)
    const step = after.steps[event.index]?.name ?? ""
    const wait = record?.input != null
      ? { user: record.input.assignee, title: `An automation waits for your input: ${step}`, body: record.input.prompt, at: record.input.requestedAt }
      : record?.approval !== undefined
        ? { user: record.approval.approver, title: `An automation waits for your approval: ${step}`, body: `${record.approval.capability} ${noticeOf(record.approval.input)}`, at: record.approval.requestedAt }
        : undefined
    const requested = event._tag === "automation_run.input_requested" || event._tag === "automation_run.approval_requested"
    if (wait !== undefined) {
      rows.push({
        op: "upsert",
        table: "notifications",
        pk: ["notification_id"],
        row: {
          notification_id: `${after.runId}:${event.index}:${event.attempt}`,
          org_id: after.orgId,
          workspace_id: after.workspaceId,
          user_id: wait.user,
          // spec 2.9's kind for what a run asks of a person
          kind: "run",
          title: wait.title,
          body: wait.body,
          subject: { automationId: after.automationId, runId: after.runId, index: event.index },
          created_at: wait.at,
          // an approved call that fails later leaves the notice resolved when it was approved
          resolved_at: requested ? null : (record?.approval?.resolvedAt ?? event.at),
          // the columns the notification actor writes too (one batch writes both alike); a run's
          // route needs the slugs, which `notifications.list` finds when it reads the notice
          deep_link: null,
          emailed_at: null
        }
      })
    }
  }
  return rows
}
