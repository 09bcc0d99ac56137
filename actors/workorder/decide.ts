import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { WorkOrderAlreadyClaimed, type WorkOrderError, WorkOrderExists, WorkOrderNotFound } from "./errors.ts"
import { WorkOrderClaimed, WorkOrderCreated, type WorkOrderEvent } from "./events.ts"
import type { WorkOrderCommand } from "./protocol.ts"
import type { WorkOrderState } from "./state.ts"

export const decide = (state: WorkOrderState, command: WorkOrderCommand, meta: CommandMeta): Either.Either<ReadonlyArray<WorkOrderEvent>, WorkOrderError> => {
  const { workOrderId, orgId, workspaceId } = command
  switch (command._tag) {
    case "CreateWorkOrder":
      if (state._tag !== "absent") return Either.left(new WorkOrderExists({ workOrderId }))
      return Either.right([new WorkOrderCreated({ workOrderId, orgId, workspaceId, title: command.title, detail: command.detail, at: meta.at })])
    case "ClaimWorkOrder": {
      // a work order of another workspace is not there, as far as this one's machines can tell
      if (state._tag === "absent" || state.orgId !== orgId || state.workspaceId !== workspaceId) return Either.left(new WorkOrderNotFound({ workOrderId }))
      if (state.claim === null) return Either.right([new WorkOrderClaimed({ workOrderId, claimId: command.claimId, machineId: command.machineId, at: meta.at })])
      // claiming it again is the same claim; another machine is refused
      return state.claim.machineId === command.machineId ? Either.right([]) : Either.left(new WorkOrderAlreadyClaimed({ workOrderId }))
    }
  }
}
