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

export class RequestCodegraphBuild extends Schema.TaggedClass<RequestCodegraphBuild>()("RequestCodegraphBuild", {
  ...callerFields,
  buildId: Schema.NonEmptyString,
  repository: Schema.NonEmptyString,
  revision: Schema.NullOr(Schema.String)
}) {}

export class RequestCertificateRenewal extends Schema.TaggedClass<RequestCertificateRenewal>()("RequestCertificateRenewal", {
  ...callerFields,
  renewalId: Schema.NonEmptyString,
  csr: Schema.NullOr(Schema.String)
}) {}

export const MachineCommand = Schema.Union(
  EnrolMachine,
  IngestEvents,
  UploadMemory,
  ClaimWorkOrder,
  RequestCodegraphBuild,
  RequestCertificateRenewal
)
export type MachineCommand = typeof MachineCommand.Type
