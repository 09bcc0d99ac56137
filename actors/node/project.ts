/** Read model `nodes`: one row per live node, mirroring its state (migration 0003). */
import type { RowOp } from "../kernel.ts"
import type { NodeEvent } from "./events.ts"
import type { NodeState } from "./state.ts"

export const project = (after: NodeState, event: NodeEvent): ReadonlyArray<RowOp> => {
  const pk = ["node_id"]
  switch (after._tag) {
    case "live":
      return [
        {
          op: "upsert",
          table: "nodes",
          pk,
          row: {
            node_id: after.nodeId,
            workspace_id: after.workspaceId,
            label: after.label,
            properties: after.properties,
            version: after.version,
            created_at: after.createdAt,
            updated_at: after.updatedAt
          }
        }
      ]
    case "deleted":
      return [{ op: "delete", table: "nodes", pk, row: { node_id: event.nodeId } }]
    case "absent":
      return []
  }
}
