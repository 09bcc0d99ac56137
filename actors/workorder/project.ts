/** Read model (migration 0030): `work_orders`, one row per work order with its claim. */
import type { RowOp } from "../kernel.ts"
import type { WorkOrderEvent } from "./events.ts"
import type { WorkOrderState } from "./state.ts"

export const project = (after: WorkOrderState, _event: WorkOrderEvent): ReadonlyArray<RowOp> => {
  if (after._tag !== "created") return []
  return [{
    op: "upsert",
    table: "work_orders",
    pk: ["work_order_id"],
    row: {
      work_order_id: after.workOrderId,
      org_id: after.orgId,
      workspace_id: after.workspaceId,
      title: after.title,
      detail: after.detail,
      created_at: after.createdAt,
      claim_id: after.claim?.claimId ?? null,
      claimed_by: after.claim?.machineId ?? null,
      claimed_at: after.claim?.claimedAt ?? null
    }
  }]
}
