import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { MachineEnrolledElsewhere, type MachineError } from "./errors.ts"
import {
  CertificateRenewalRequested,
  CodegraphBuildRequested,
  EventsIngested,
  MachineEnrolled,
  type MachineEvent,
  MemoryUploaded,
  WorkOrderClaimed
} from "./events.ts"
import type { MachineCommand } from "./protocol.ts"
import type { MachineState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<MachineEvent>, MachineError>

/**
 * The enrolment a command needs first: none when the machine is enrolled in the command's
 * workspace, `machine.enrolled` when it is not enrolled yet (its first call arrived before the
 * operator's enrolment was seen), a refusal when it belongs to another workspace.
 */
const enrolment = (state: MachineState, command: MachineCommand, meta: CommandMeta): Either.Either<ReadonlyArray<MachineEvent>, MachineError> => {
  const { machineId, orgId, workspaceId, keyId } = command
  if (state._tag === "absent") return Either.right([new MachineEnrolled({ machineId, orgId, workspaceId, keyId, at: meta.at })])
  if (state.orgId !== orgId || state.workspaceId !== workspaceId) return Either.left(new MachineEnrolledElsewhere({ machineId, workspaceId }))
  return Either.right([])
}

/** The event recording the call itself. */
const recorded = (command: Exclude<MachineCommand, { readonly _tag: "EnrolMachine" }>, at: string): MachineEvent => {
  const { machineId } = command
  switch (command._tag) {
    case "IngestEvents":
      return new EventsIngested({ machineId, batchId: command.batchId, events: command.events, at })
    case "UploadMemory":
      return new MemoryUploaded({ machineId, memoryId: command.memoryId, text: command.text, tags: command.tags, at })
    case "ClaimWorkOrder":
      return new WorkOrderClaimed({ machineId, claimId: command.claimId, workOrderId: command.workOrderId, at })
    case "RequestCodegraphBuild":
      return new CodegraphBuildRequested({ machineId, buildId: command.buildId, repository: command.repository, revision: command.revision, at })
    case "RequestCertificateRenewal":
      return new CertificateRenewalRequested({ machineId, renewalId: command.renewalId, csr: command.csr, at })
  }
}

export const decide = (state: MachineState, command: MachineCommand, meta: CommandMeta): Decision =>
  Either.map(enrolment(state, command, meta), (enrolled) =>
    // enrolling an enrolled machine again (another host key for it) changes nothing
    command._tag === "EnrolMachine" ? enrolled : [...enrolled, recorded(command, meta.at)]
  )
