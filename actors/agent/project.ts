/** Read model `agents` (migrations 0013, 0028): one row per live agent, its whole definition. */
import type { EventContext, RowOp } from "../kernel.ts"
import type { AgentEvent } from "./events.ts"
import type { AgentState } from "./state.ts"

const pk = ["workspace_id", "slug"]

export const project = (after: AgentState, event: AgentEvent, _ctx: EventContext): ReadonlyArray<RowOp> => {
  if (after._tag === "Absent") return [{ op: "delete", table: "agents", pk, row: { workspace_id: event.workspaceId, slug: event.slug } }]
  return [
    {
      op: "upsert",
      table: "agents",
      pk,
      row: {
        workspace_id: after.workspaceId,
        slug: after.slug,
        org_id: after.orgId,
        name: after.name,
        description: after.description,
        instructions: after.instructions,
        tier: after.tier,
        tools: after.tools,
        skills: after.skills,
        version: after.version,
        created_at: after.createdAt,
        updated_at: after.updatedAt
      }
    }
  ]
}
