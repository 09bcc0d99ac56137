/** Read models: `sessions`, and a security record of each sign-in and sign-out in the audit log
 * of every organization the person belonged to at sign-in. */
import { securityAuditRow } from "../audit/security.ts"
import type { EventContext, RowOp } from "../kernel.ts"
import type { SessionEvent } from "./events.ts"
import type { SessionState } from "./state.ts"

export const project = (after: SessionState, event: SessionEvent, ctx: EventContext): ReadonlyArray<RowOp> => {
  if (after._tag === "Absent") return []
  const session: RowOp = {
    op: "upsert",
    table: "sessions",
    pk: ["session_id"],
    row: {
      session_id: after.sessionId,
      lookup_id: after.lookupId,
      secret_hash: after.secretHash,
      user_id: after.userId,
      method: after.method,
      sso_org_id: after.sso?.orgId ?? null,
      sso_provider_id: after.sso?.providerId ?? null,
      mfa: after.mfa,
      created_at: after.startedAt,
      expires_at: after.expiresAt,
      ended_at: after._tag === "Ended" ? after.endedAt : null
    }
  }
  const detail = { sessionId: after.sessionId, method: after.method, mfa: after.mfa, ssoProviderId: after.sso?.providerId ?? null }
  const audit = after.orgIds.map((orgId) =>
    securityAuditRow(ctx, { orgId, workspaceId: null, event: event._tag, detail, userId: after.userId })
  )
  return [session, ...audit]
}
