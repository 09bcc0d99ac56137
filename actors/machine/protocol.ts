/**
 * Commands of a machine (`machine:<machineId>`). Every command names the machine, organization,
 * workspace and host key it comes from (the application takes them from the host key, never from
 * the caller's input), so the decider can enrol a machine whose enrolment it has not seen yet and
 * refuse a key that speaks for a machine of another workspace. Ids and time come from outside.
 */
import { Schema } from "effect"
import { HostEvent } from "./events.ts"

/** Where a command comes from. */
export const callerFields = {
  machineId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  keyId: Schema.NonEmptyString
}

/** The operator issued a host key for the machine (`svc issue-key`). */
export class EnrolMachine extends Schema.TaggedClass<EnrolMachine>()("EnrolMachine", callerFields) {}

export class IngestEvents extends Schema.TaggedClass<IngestEvents>()("IngestEvents", {
  ...callerFields,
  batchId: Schema.NonEmptyString,
  events: Schema.Array(HostEvent)
}) {}

export class UploadMemory extends Schema.TaggedClass<UploadMemory>()("UploadMemory", {
  ...callerFields,
  memoryId: Schema.NonEmptyString,
  text: Schema.String,
  tags: Schema.Array(Schema.String)
}) {}

export class ClaimWorkOrder extends Schema.TaggedClass<ClaimWorkOrder>()("ClaimWorkOrder", {
  ...callerFields,
  claimId: Schema.NonEmptyString,
  workOrderId: Schema.NonEmptyString
}) {}

/** An Owner or workspace Admin queues a command for the machine (the machine must be enrolled in
 * that workspace; no key speaks here, so there is no key id). */
export class EnqueueCommand extends Schema.TaggedClass<EnqueueCommand>()("EnqueueCommand", {
  machineId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  commandId: Schema.NonEmptyString,
  name: Schema.NonEmptyString,
  arguments: Schema.Unknown
}) {}

export class AcknowledgeCommand extends Schema.TaggedClass<AcknowledgeCommand>()("AcknowledgeCommand", {
  ...callerFields,
  commandId: Schema.NonEmptyString,
  outcome: Schema.Literal("succeeded", "failed"),
  detail: Schema.NullOr(Schema.String)
}) {}

/** Record a client certificate the workspace CA signs for the machine (signed after it is recorded). */
export class IssueCertificate extends Schema.TaggedClass<IssueCertificate>()("IssueCertificate", {
  ...callerFields,
  serialNumber: Schema.NonEmptyString,
  publicKeySha256: Schema.NonEmptyString,
  notBefore: Schema.String,
  notAfter: Schema.String
}) {}

export const MachineCommand = Schema.Union(
  EnrolMachine,
  IngestEvents,
  UploadMemory,
  ClaimWorkOrder,
  EnqueueCommand,
  AcknowledgeCommand,
  IssueCertificate
)
export type MachineCommand = typeof MachineCommand.Type
