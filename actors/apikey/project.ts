/** Read models: `api_keys`, one full row from the key's state after each event; and the
 * organization audit log's security records of key creation, rotation and revocation. */
import { securityAuditRow } from "../audit/security.ts"
import type { EventContext, RowOp } from "../kernel.ts"
import { statusOf } from "./decide.ts"
import type { ApiKeyEvent } from "./events.ts"
import { RESERVED_SCOPE_KEY } from "./purposes.ts"
import { type ApiKeyState, rotatedKeyStopsAt } from "./state.ts"

export const project = (after: ApiKeyState, event: ApiKeyEvent, ctx: EventContext): ReadonlyArray<RowOp> => {
  // every event leaves the key active, in grace or revoked
  if (after._tag === "Absent") return []
  const row: RowOp = {
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
      purpose: Object.hasOwn(after.scopes, RESERVED_SCOPE_KEY) ? after.scopes[RESERVED_SCOPE_KEY] : null,
      custom_role: after.customRole,
      machine_id: after.machineId,
      supersedes: after.supersedes,
      superseded_by: after._tag === "Active" ? null : after.supersededBy,
      status: statusOf(after),
      // a key in grace stops at the earlier of its own expiry and the grace's end; a revoked one keeps its expiry here
      expires_at: after._tag === "Grace" ? rotatedKeyStopsAt(after) : after.expiresAt,
      created_at: after.createdAt,
      revoked_at: after._tag === "Revoked" ? after.revokedAt : null
    }
  }
  const subject = { keyId: after.keyId, name: after.name, workspaceId: after.workspaceId }
  const detail =
    event._tag === "api_key.created"
      ? { ...subject, purpose: row.row.purpose, supersedes: after.supersedes }
      : event._tag === "api_key.rotated"
        ? { ...subject, supersededBy: event.supersededBy, graceEndsAt: event.graceEndsAt }
        : { ...subject, reason: event.reason }
  return [row, securityAuditRow(ctx, { orgId: after.orgId, workspaceId: after.workspaceId, event: event._tag, detail })]
}
