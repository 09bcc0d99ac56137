/**
 * Events of an enrolled machine (key `machine:<machineId>`): the calls a host key makes for the
 * machine it was issued for (spec 5 rule 8). A published `_tag` is never renamed. Each event
 * repeats the command's time, because `evolve` sees only the event.
 */
import { Schema } from "effect"

/** One event a host reports; its `data` is the host's own JSON, stored as sent. */
export const HostEvent = Schema.Struct({
  type: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200)),
  /** When it happened on the host (ISO 8601), if the host says. */
  at: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
  data: Schema.optional(Schema.Unknown)
})
export type HostEvent = typeof HostEvent.Type

/** The machine joined a workspace: through the operator issuing its host key, or (if that was
 * not yet projected) through its first call. */
export class MachineEnrolled extends Schema.TaggedClass<MachineEnrolled>()("machine.enrolled", {
  machineId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  /** The host key issued with the enrolment, or whose call enrolled it. */
  keyId: Schema.NonEmptyString,
  at: Schema.String
}) {}

export class EventsIngested extends Schema.TaggedClass<EventsIngested>()("machine.events_ingested", {
  machineId: Schema.NonEmptyString,
  batchId: Schema.NonEmptyString,
  events: Schema.Array(HostEvent),
  at: Schema.String
}) {}

export class MemoryUploaded extends Schema.TaggedClass<MemoryUploaded>()("machine.memory_uploaded", {
  machineId: Schema.NonEmptyString,
  memoryId: Schema.NonEmptyString,
  text: Schema.String,
  tags: Schema.Array(Schema.String),
  at: Schema.String
}) {}

export class WorkOrderClaimed extends Schema.TaggedClass<WorkOrderClaimed>()("machine.work_order_claimed", {
  machineId: Schema.NonEmptyString,
  claimId: Schema.NonEmptyString,
  workOrderId: Schema.NonEmptyString,
  at: Schema.String
}) {}

/** A local code graph build the machine asked for. No longer written (`host.codegraph.build` left
 * the registry, docs/decisions.md "Issue 27"); kept so that logs holding it still replay. */
export class CodegraphBuildRequested extends Schema.TaggedClass<CodegraphBuildRequested>()("machine.codegraph_build_requested", {
  machineId: Schema.NonEmptyString,
  buildId: Schema.NonEmptyString,
  repository: Schema.NonEmptyString,
  revision: Schema.NullOr(Schema.String),
  at: Schema.String
}) {}

/** A certificate renewal the machine asked for, before the workspace CA signed renewals. No longer
 * written (`machine.certificate_issued` is); kept so that logs holding it still replay. */
export class CertificateRenewalRequested extends Schema.TaggedClass<CertificateRenewalRequested>()("machine.certificate_renewal_requested", {
  machineId: Schema.NonEmptyString,
  renewalId: Schema.NonEmptyString,
  /** The certificate signing request (PEM) the machine sent, if any. */
  csr: Schema.NullOr(Schema.String),
  at: Schema.String
}) {}

/** An Owner or workspace Admin queued a command for the machine; it waits until acknowledged. */
export class CommandEnqueued extends Schema.TaggedClass<CommandEnqueued>()("machine.command_enqueued", {
  machineId: Schema.NonEmptyString,
  commandId: Schema.NonEmptyString,
  /** What the machine is asked to do, in its agent's terms (e.g. `agent.restart`). */
  name: Schema.NonEmptyString,
  arguments: Schema.Unknown,
  at: Schema.String
}) {}

/** The machine acknowledged a queued command: it ran it, or could not. */
export class CommandAcknowledged extends Schema.TaggedClass<CommandAcknowledged>()("machine.command_acknowledged", {
  machineId: Schema.NonEmptyString,
  commandId: Schema.NonEmptyString,
  outcome: Schema.Literal("succeeded", "failed"),
  detail: Schema.NullOr(Schema.String),
  at: Schema.String
}) {}

/** The workspace CA issued the machine a client certificate for its public key. */
export class CertificateIssued extends Schema.TaggedClass<CertificateIssued>()("machine.certificate_issued", {
  machineId: Schema.NonEmptyString,
  /** Hex, as the certificate carries it. */
  serialNumber: Schema.NonEmptyString,
  /** SHA-256 of the certified public key (DER SubjectPublicKeyInfo), hex. */
  publicKeySha256: Schema.NonEmptyString,
  notBefore: Schema.String,
  notAfter: Schema.String,
  at: Schema.String
}) {}

export const MachineEvent = Schema.Union(
  MachineEnrolled,
  EventsIngested,
  MemoryUploaded,
  WorkOrderClaimed,
  CodegraphBuildRequested,
  CertificateRenewalRequested,
  CommandEnqueued,
  CommandAcknowledged,
  CertificateIssued
)
export type MachineEvent = typeof MachineEvent.Type
