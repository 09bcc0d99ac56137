/** A work order is absent until created; then it is open until one machine claims it, for good. */
import { Schema } from "effect"

export const WorkOrderClaim = Schema.Struct({ claimId: Schema.String, machineId: Schema.String, claimedAt: Schema.String })

export const CreatedWorkOrder = Schema.TaggedStruct("created", {
  workOrderId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  title: Schema.NonEmptyString,
  detail: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  claim: Schema.NullOr(WorkOrderClaim)
})
export type CreatedWorkOrder = typeof CreatedWorkOrder.Type

export const WorkOrderState = Schema.Union(Schema.TaggedStruct("absent", {}), CreatedWorkOrder)
export type WorkOrderState = typeof WorkOrderState.Type

export const initialState: WorkOrderState = { _tag: "absent" }
