/** Commands of a work order (`workorder:<workOrderId>`); ids and time come from outside. */
import { Schema } from "effect"

const place = { workOrderId: Schema.NonEmptyString, orgId: Schema.NonEmptyString, workspaceId: Schema.NonEmptyString }

export class CreateWorkOrder extends Schema.TaggedClass<CreateWorkOrder>()("CreateWorkOrder", {
  ...place,
  title: Schema.NonEmptyString,
  detail: Schema.NullOr(Schema.String)
}) {}

/** A machine of the workspace claims the work order (the application takes the machine from its host key). */
export class ClaimWorkOrder extends Schema.TaggedClass<ClaimWorkOrder>()("ClaimWorkOrder", {
  ...place,
  claimId: Schema.NonEmptyString,
  machineId: Schema.NonEmptyString
}) {}

export const WorkOrderCommand = Schema.Union(CreateWorkOrder, ClaimWorkOrder)
export type WorkOrderCommand = typeof WorkOrderCommand.Type
