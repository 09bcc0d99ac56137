/** Read model (migration 0016): `mcp_auth_alerts`, one row per organization that set it. */
import type { RowOp } from "../kernel.ts"
import type { McpAuthAlertsState } from "./state.ts"

export const project = (after: McpAuthAlertsState): ReadonlyArray<RowOp> =>
  after._tag === "Unset"
    ? []
    : [{ op: "upsert", table: "mcp_auth_alerts", pk: ["org_id"], row: { org_id: after.orgId, send_email: after.sendEmail, roles: after.roles, updated_at: after.updatedAt } }]
