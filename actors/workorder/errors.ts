/** Rejections of a work order command. */
import { Schema } from "effect"

/** 404 `not_found`, reason `work_order_not_found`: no such work order in the workspace. */
export class WorkOrderNotFound extends Schema.TaggedError<WorkOrderNotFound>()("WorkOrderNotFound", {
  workOrderId: Schema.String
}) {
  override get message() {
    return `no work order ${this.workOrderId} in this workspace`
  }
}

/** 409 `conflict`, reason `work_order_claimed`: another machine holds the claim. */
export class WorkOrderAlreadyClaimed extends Schema.TaggedError<WorkOrderAlreadyClaimed>()("WorkOrderAlreadyClaimed", {
  workOrderId: Schema.String
}) {
  override get message() {
    return `work order ${this.workOrderId} is claimed by another machine`
  }
}

/** 409 `conflict`, reason `work_order_exists`: the id is taken. */
export class WorkOrderExists extends Schema.TaggedError<WorkOrderExists>()("WorkOrderExists", {
  workOrderId: Schema.String
}) {
  override get message() {
    return `work order ${this.workOrderId} already exists`
  }
}

export const WorkOrderError = Schema.Union(WorkOrderNotFound, WorkOrderAlreadyClaimed, WorkOrderExists)
export type WorkOrderError = typeof WorkOrderError.Type
