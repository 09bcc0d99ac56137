/** A work order, key `workorder:<workOrderId>`: created by an Owner or workspace Admin, claimed by
 * one machine of the workspace. Its single writer makes the claim exactly once across a cluster. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { WorkOrderError } from "./errors.ts"
import { WorkOrderEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { WorkOrderCommand } from "./protocol.ts"
import { initialState, WorkOrderState } from "./state.ts"

export const WorkOrderActor: ActorKind<WorkOrderState, WorkOrderCommand, WorkOrderEvent, WorkOrderError> = {
  kind: "workorder",
  initialState,
  state: WorkOrderState,
  commands: WorkOrderCommand,
  events: WorkOrderEvent,
  errors: WorkOrderError,
  decide,
  evolve,
  project
}
