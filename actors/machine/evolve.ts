import type { MachineEvent } from "./events.ts"
import type { EnrolledMachine, MachineState } from "./state.ts"

const counted = (machine: EnrolledMachine, at: string, field: "eventsIngested" | "memories" | "workOrdersClaimed" | "codegraphBuilds" | "certificateRenewals", by = 1): MachineState => ({
  ...machine,
  lastSeenAt: at,
  [field]: machine[field] + by
})

export const evolve = (state: MachineState, event: MachineEvent): MachineState => {
  if (event._tag === "machine.enrolled") {
    const { machineId, orgId, workspaceId, keyId, at } = event
    return {
      _tag: "enrolled",
      machineId,
      orgId,
      workspaceId,
      keyId,
      enrolledAt: at,
      lastSeenAt: at,
      eventsIngested: 0,
      memories: 0,
      workOrdersClaimed: 0,
      codegraphBuilds: 0,
      certificateRenewals: 0,
      pendingCommands: []
    }
  }
  // the decider records a call only for an enrolled machine, in the same command as its enrolment
  if (state._tag !== "enrolled") throw new Error(`${event._tag} for machine ${event.machineId}, which is not enrolled`)
  switch (event._tag) {
    case "machine.events_ingested":
      return counted(state, event.at, "eventsIngested", event.events.length)
    case "machine.memory_uploaded":
      return counted(state, event.at, "memories")
    case "machine.work_order_claimed":
      return counted(state, event.at, "workOrdersClaimed")
    case "machine.codegraph_build_requested":
      return counted(state, event.at, "codegraphBuilds")
    case "machine.certificate_renewal_requested":
    case "machine.certificate_issued":
      return counted(state, event.at, "certificateRenewals")
    // queuing is the Owner's act, not the machine's: it is not a sign of life
    case "machine.command_enqueued":
      return { ...state, pendingCommands: [...state.pendingCommands, event.commandId] }
    case "machine.command_acknowledged":
      return { ...state, lastSeenAt: event.at, pendingCommands: state.pendingCommands.filter((id) => id !== event.commandId) }
  }
}
