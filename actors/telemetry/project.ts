/** Read model `telemetry_batches` (migration 0005), append-only: one row per batch. */
import type { EventContext, Json, RowOp } from "../kernel.ts"
import type { TelemetryIngested } from "./events.ts"

export const project = (_after: null, event: TelemetryIngested, _ctx: EventContext): ReadonlyArray<RowOp> => [
  {
    op: "insert",
    table: "telemetry_batches",
    pk: ["batch_id"],
    row: {
      batch_id: event.batchId,
      org_id: event.orgId,
      workspace_id: event.workspaceId,
      key_id: event.keyId,
      point_count: event.points.length,
      points: event.points as unknown as Json,
      at: event.at
    }
  }
]
