/** Read model `schema_labels`: one row per label, its current definition (migration 0003). */
import type { EventContext, RowOp } from "../kernel.ts"
import type { SchemaEvent } from "./events.ts"
import type { SchemaState } from "./state.ts"

export const project = (_after: SchemaState, event: SchemaEvent, ctx: EventContext): ReadonlyArray<RowOp> => {
  switch (event._tag) {
    case "schema.label_defined":
      return [
        {
          op: "upsert",
          table: "schema_labels",
          pk: ["workspace_id", "label"],
          row: {
            workspace_id: event.workspaceId,
            label: event.label,
            properties: event.properties,
            version: event.version,
            updated_at: ctx.at
          }
        }
      ]
  }
}
