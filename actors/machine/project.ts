/**
 * Read models (migration 0005): `machines`, one row per enrolled machine with its counts; and
 * `machine_records`, one append-only row per recorded call (ingested events, memories, work order
 * claims, issued certificates, and the code graph build and certificate renewal requests of old
 * logs); and `machine_commands` with `machine_command_acks` (migration 0029), the commands queued for it
 * and their acknowledgements. The enrolment is also a security
 * record in the organization audit log.
 */
import { securityAuditRow } from "../audit/security.ts"
import type { EventContext, Json, RowOp } from "../kernel.ts"
import type { MachineEvent } from "./events.ts"
import type { EnrolledMachine, MachineState } from "./state.ts"

/** What `machine_records.kind` says. */
export type RecordKind = "events" | "memory" | "work_order_claim" | "codegraph_build" | "certificate_renewal"

const machineRow = (machine: EnrolledMachine): RowOp => ({
  op: "upsert",
  table: "machines",
  pk: ["machine_id"],
  row: {
    machine_id: machine.machineId,
    org_id: machine.orgId,
    workspace_id: machine.workspaceId,
    key_id: machine.keyId,
    enrolled_at: machine.enrolledAt,
    last_seen_at: machine.lastSeenAt,
    events_ingested: machine.eventsIngested,
    memories: machine.memories,
    work_orders_claimed: machine.workOrdersClaimed,
    codegraph_builds: machine.codegraphBuilds,
    certificate_renewals: machine.certificateRenewals
  }
})

const record = (
  machine: EnrolledMachine,
  recordId: string,
  kind: RecordKind,
  at: string,
  fields: { readonly subject?: string | null; readonly body?: string | null; readonly detail: Readonly<Record<string, Json>> }
): RowOp => ({
  op: "insert",
  table: "machine_records",
  pk: ["record_id"],
  row: {
    record_id: recordId,
    machine_id: machine.machineId,
    org_id: machine.orgId,
    workspace_id: machine.workspaceId,
    kind,
    subject: fields.subject ?? null,
    body: fields.body ?? null,
    detail: fields.detail,
    at
  }
})

/** A queued command (`machine_commands`) and its acknowledgement (`machine_command_acks`), append-only. */
const commandRow = (machine: EnrolledMachine, event: Extract<MachineEvent, { readonly _tag: "machine.command_enqueued" | "machine.command_acknowledged" }>, ctx: EventContext): RowOp =>
  event._tag === "machine.command_enqueued"
    ? {
        op: "insert",
        table: "machine_commands",
        pk: ["command_id"],
        row: {
          command_id: event.commandId,
          machine_id: machine.machineId,
          org_id: machine.orgId,
          workspace_id: machine.workspaceId,
          name: event.name,
          arguments: (event.arguments ?? null) as Json,
          enqueued_by: ctx.actor,
          enqueued_at: event.at
        }
      }
    : {
        op: "insert",
        table: "machine_command_acks",
        pk: ["command_id"],
        row: { command_id: event.commandId, machine_id: machine.machineId, outcome: event.outcome, detail: event.detail, acknowledged_at: event.at }
      }

type RecordedEvent = Exclude<MachineEvent, { readonly _tag: "machine.enrolled" | "machine.command_enqueued" | "machine.command_acknowledged" }>

const recordOf = (machine: EnrolledMachine, event: RecordedEvent): RowOp => {
  switch (event._tag) {
    case "machine.events_ingested":
      return record(machine, event.batchId, "events", event.at, { detail: { count: event.events.length, events: event.events as Json } })
    case "machine.memory_uploaded":
      return record(machine, event.memoryId, "memory", event.at, { body: event.text, detail: { tags: event.tags } })
    case "machine.work_order_claimed":
      return record(machine, event.claimId, "work_order_claim", event.at, { subject: event.workOrderId, detail: {} })
    case "machine.codegraph_build_requested":
      return record(machine, event.buildId, "codegraph_build", event.at, { subject: event.repository, detail: { revision: event.revision } })
    case "machine.certificate_renewal_requested":
      return record(machine, event.renewalId, "certificate_renewal", event.at, { body: event.csr, detail: {} })
    case "machine.certificate_issued": {
      const { serialNumber, publicKeySha256, notBefore, notAfter } = event
      return record(machine, `crt_${serialNumber}`, "certificate_renewal", event.at, { subject: serialNumber, detail: { publicKeySha256, notBefore, notAfter } })
    }
  }
}

export const project = (after: MachineState, event: MachineEvent, ctx: EventContext): ReadonlyArray<RowOp> => {
  if (after._tag !== "enrolled") return []
  if (event._tag === "machine.enrolled") {
    return [
      machineRow(after),
      securityAuditRow(ctx, {
        orgId: after.orgId,
        workspaceId: after.workspaceId,
        event: event._tag,
        detail: { machineId: after.machineId, keyId: after.keyId }
      })
    ]
  }
  if (event._tag === "machine.command_enqueued" || event._tag === "machine.command_acknowledged") return [machineRow(after), commandRow(after, event, ctx)]
  return [machineRow(after), recordOf(after, event)]
}
