import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { CommandNotPending, MachineEnrolledElsewhere, type MachineError, MachineNotEnrolled } from "./errors.ts"
import {
  CertificateIssued,
  CommandAcknowledged,
  CommandEnqueued,
  EventsIngested,
  MachineEnrolled,
  type MachineEvent,
  MemoryUploaded,
  WorkOrderClaimed
} from "./events.ts"
import type { MachineCommand } from "./protocol.ts"
import type { MachineState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<MachineEvent>, MachineError>

/** A command a host key sends for its own machine. */
type HostCall = Exclude<MachineCommand, { readonly _tag: "EnrolMachine" | "EnqueueCommand" }>

/**
 * The enrolment a command needs first: none when the machine is enrolled in the command's
 * workspace, `machine.enrolled` when it is not enrolled yet (its first call arrived before the
 * operator's enrolment was seen), a refusal when it belongs to another workspace.
 */
const enrolment = (state: MachineState, command: HostCall | Extract<MachineCommand, { readonly _tag: "EnrolMachine" }>, meta: CommandMeta): Decision => {
  const { machineId, orgId, workspaceId, keyId } = command
  if (state._tag === "absent") return Either.right([new MachineEnrolled({ machineId, orgId, workspaceId, keyId, at: meta.at })])
  if (state.orgId !== orgId || state.workspaceId !== workspaceId) return Either.left(new MachineEnrolledElsewhere({ machineId, workspaceId }))
  return Either.right([])
}

/** The event recording the call itself. */
const recorded = (state: MachineState, command: HostCall, at: string): Either.Either<MachineEvent, MachineError> => {
  const { machineId } = command
  switch (command._tag) {
    case "IngestEvents":
      return Either.right(new EventsIngested({ machineId, batchId: command.batchId, events: command.events, at }))
    case "UploadMemory":
      return Either.right(new MemoryUploaded({ machineId, memoryId: command.memoryId, text: command.text, tags: command.tags, at }))
    case "ClaimWorkOrder":
      return Either.right(new WorkOrderClaimed({ machineId, claimId: command.claimId, workOrderId: command.workOrderId, at }))
    case "AcknowledgeCommand": {
      const { commandId, outcome, detail } = command
      if (state._tag !== "enrolled" || !state.pendingCommands.includes(commandId)) return Either.left(new CommandNotPending({ machineId, commandId }))
      return Either.right(new CommandAcknowledged({ machineId, commandId, outcome, detail, at }))
    }
    case "IssueCertificate": {
      const { serialNumber, publicKeySha256, notBefore, notAfter } = command
      return Either.right(new CertificateIssued({ machineId, serialNumber, publicKeySha256, notBefore, notAfter, at }))
    }
  }
}

export const decide = (state: MachineState, command: MachineCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "EnrolMachine":
      // enrolling an enrolled machine again (another host key for it) changes nothing
      return enrolment(state, command, meta)
    case "EnqueueCommand": {
      // an Owner or Admin queues only for a machine enrolled in their own workspace
      const { machineId, workspaceId, orgId, commandId, name } = command
      if (state._tag !== "enrolled" || state.workspaceId !== workspaceId || state.orgId !== orgId) return Either.left(new MachineNotEnrolled({ machineId }))
      return Either.right([new CommandEnqueued({ machineId, commandId, name, arguments: command.arguments, at: meta.at })])
    }
    default:
      return Either.flatMap(enrolment(state, command, meta), (enrolled) => Either.map(recorded(state, command, meta.at), (event) => [...enrolled, event]))
  }
}
