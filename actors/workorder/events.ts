/**
 * Events of a work order (key `workorder:<workOrderId>`): an Owner or workspace Admin creates it
 * for the workspace's machines, and one machine claims it, once. A published `_tag` is never
 * renamed. Each event repeats the command's time, because `evolve` sees only the event.
 */
import { Schema } from "effect"

export class WorkOrderCreated extends Schema.TaggedClass<WorkOrderCreated>()("workorder.created", {
  workOrderId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  title: Schema.NonEmptyString,
  detail: Schema.NullOr(Schema.String),
  at: Schema.String
}) {}

export class WorkOrderClaimed extends Schema.TaggedClass<WorkOrderClaimed>()("workorder.claimed", {
  workOrderId: Schema.NonEmptyString,
  claimId: Schema.NonEmptyString,
  machineId: Schema.NonEmptyString,
  at: Schema.String
}) {}

export const WorkOrderEvent = Schema.Union(WorkOrderCreated, WorkOrderClaimed)
export type WorkOrderEvent = typeof WorkOrderEvent.Type
