/** Read model `skills` (migration 0028): one row per live skill, its current version. */
import type { EventContext, RowOp } from "../kernel.ts"
import type { SkillEvent } from "./events.ts"
import type { SkillState } from "./state.ts"

const pk = ["workspace_id", "slug"]

export const project = (after: SkillState, event: SkillEvent, _ctx: EventContext): ReadonlyArray<RowOp> => {
  if (after._tag === "Absent") return [{ op: "delete", table: "skills", pk, row: { workspace_id: event.workspaceId, slug: event.slug } }]
  return [
    {
      op: "upsert",
      table: "skills",
      pk,
      row: {
        workspace_id: after.workspaceId,
        slug: after.slug,
        org_id: after.orgId,
        name: after.name,
        description: after.description,
        instructions: after.instructions,
        version: after.version,
        created_at: after.createdAt,
        updated_at: after.updatedAt
      }
    }
  ]
}
