/** Read model: `api_keys`, one full row from the key's state after each event. */
import type { RowOp } from "../kernel.ts"
import type { ApiKeyState } from "./state.ts"

export const project = (after: ApiKeyState): ReadonlyArray<RowOp> => {
  // every event leaves the key active or revoked
  if (after._tag === "Absent") return []
  return [
    {
      op: "upsert",
      table: "api_keys",
      pk: ["key_id"],
      row: {
        key_id: after.keyId,
        org_id: after.orgId,
        workspace_id: after.workspaceId,
        created_by: after.createdBy,
        name: after.name,
        lookup_id: after.lookupId,
        secret_hash: after.secretHash,
        scopes: after.scopes,
        status: after._tag === "Active" ? "active" : "revoked",
        expires_at: after.expiresAt,
        created_at: after.createdAt,
        revoked_at: after._tag === "Revoked" ? after.revokedAt : null
      }
    }
  ]
}
