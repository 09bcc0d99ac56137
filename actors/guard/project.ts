/** Read model: a lock is a security record in the audit log of each organization its attempt names.
 * The state itself (`actor_state`) is what sign-in reads before it spends a password hash. */
import { securityAuditRow } from "../audit/security.ts"
import type { EventContext, RowOp } from "../kernel.ts"
import type { GuardEvent } from "./events.ts"
import type { GuardState } from "./state.ts"

export const project = (_after: GuardState, event: GuardEvent, ctx: EventContext): ReadonlyArray<RowOp> => {
  if (event._tag !== "guard.locked") return []
  const detail = {
    flow: event.flow,
    scope: event.scope,
    email: event.email,
    address: event.address,
    failures: event.failures,
    lockSeconds: Math.ceil(event.lockMs / 1000),
    lockedUntil: event.lockedUntil
  }
  return event.orgIds.map((orgId) => securityAuditRow(ctx, { orgId, workspaceId: null, event: event._tag, detail, userId: event.userId }))
}
