/** Read model: `files` (migration 0010), one row per uploaded file. The chat engine finds a
 * request's attachments there by workspace and id; the bytes are in the content table. */
import type { EventContext, RowOp } from "../kernel.ts"
import type { FileEvent } from "./events.ts"
import type { FileState } from "./state.ts"

export const project = (after: FileState, _event: FileEvent, _ctx: EventContext): ReadonlyArray<RowOp> => {
  if (after._tag === "Absent") return []
  return [
    {
      op: "upsert",
      table: "files",
      pk: ["file_id"],
      row: {
        file_id: after.fileId,
        org_id: after.orgId,
        workspace_id: after.workspaceId,
        user_id: after.userId,
        name: after.name,
        media_type: after.mediaType,
        size: after.size,
        sha256: after.sha256,
        uploaded_at: after.uploadedAt
      }
    }
  ]
}
