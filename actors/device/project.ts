/** Read model: `device_authorizations` (migrations 0004 and 0006), one full row from the device
 * login's state after each event. The token route finds a device by `device_lookup`, the approve
 * and deny capabilities by `user_code`. */
import type { EventContext, RowOp } from "../kernel.ts"
import type { DeviceEvent } from "./events.ts"
import { type DeviceState, statusOf } from "./state.ts"

export const project = (after: DeviceState, _event: DeviceEvent, _ctx: EventContext): ReadonlyArray<RowOp> => {
  if (after._tag === "Absent") return []
  const approved = after._tag === "Approved" || after._tag === "Redeemed" ? after : undefined
  return [
    {
      op: "upsert",
      table: "device_authorizations",
      pk: ["device_id"],
      row: {
        device_id: after.deviceId,
        user_code: after.userCode,
        device_lookup: after.deviceLookup,
        device_secret_hash: after.deviceSecretHash,
        status: statusOf(after),
        client_name: after.clientName,
        org_id: approved?.orgId ?? null,
        workspace_id: approved?.workspaceId ?? null,
        user_id: approved?.userId ?? (after._tag === "Denied" ? after.userId : null),
        key_id: after._tag === "Redeemed" ? after.keyId : null,
        created_at: after.requestedAt,
        expires_at: after.expiresAt,
        decided_at: approved?.approvedAt ?? (after._tag === "Denied" ? after.deniedAt : null),
        redeemed_at: after._tag === "Redeemed" ? after.redeemedAt : null
      }
    }
  ]
}
