import type { WorkOrderEvent } from "./events.ts"
import type { WorkOrderState } from "./state.ts"

export const evolve = (state: WorkOrderState, event: WorkOrderEvent): WorkOrderState => {
  if (event._tag === "workorder.created") {
    const { workOrderId, orgId, workspaceId, title, detail, at } = event
    return { _tag: "created", workOrderId, orgId, workspaceId, title, detail, createdAt: at, claim: null }
  }
  if (state._tag !== "created") throw new Error(`${event._tag} for work order ${event.workOrderId}, which was not created`)
  return { ...state, claim: { claimId: event.claimId, machineId: event.machineId, claimedAt: event.at } }
}
