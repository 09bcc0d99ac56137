/** Read models (migration 0019): `documents`, one row per document at its latest version, and
 * `document_versions`, one row per version with its text. */
import type { EventContext, RowOp } from "../kernel.ts"
import type { DocumentEvent } from "./events.ts"
import type { DocumentState } from "./state.ts"

export const project = (after: DocumentState, _event: DocumentEvent, _ctx: EventContext): ReadonlyArray<RowOp> => {
  if (after._tag === "Absent") return []
  return [
    {
      op: "upsert",
      table: "documents",
      pk: ["document_id"],
      row: {
        document_id: after.documentId,
        org_id: after.orgId,
        workspace_id: after.workspaceId,
        title: after.title,
        version: after.version,
        created_by: after.createdBy,
        created_at: after.createdAt,
        updated_by: after.updatedBy,
        updated_at: after.updatedAt
      }
    },
    {
      op: "insert",
      table: "document_versions",
      pk: ["document_id", "version"],
      row: {
        document_id: after.documentId,
        version: after.version,
        title: after.title,
        content: after.content,
        user_id: after.updatedBy,
        created_at: after.updatedAt
      }
    }
  ]
}
