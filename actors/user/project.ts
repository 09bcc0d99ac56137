/** Read models: `users`, `user_credentials` (hash and sealed secrets only), `sso_identities`. */
import type { RowOp } from "../kernel.ts"
import type { UserEvent } from "./events.ts"
import type { UserState } from "./state.ts"

export const project = (after: UserState, event: UserEvent): ReadonlyArray<RowOp> => {
  if (after._tag === "Absent") return []
  switch (event._tag) {
    case "user.registered":
      return [
        {
          op: "upsert",
          table: "users",
          pk: ["user_id"],
          row: { user_id: event.userId, email: event.email, name: event.name, created_at: event.createdAt }
        }
      ]
    case "user.sso_identity_linked":
      return [
        {
          op: "upsert",
          table: "sso_identities",
          pk: ["provider_id", "subject"],
          row: { provider_id: event.providerId, subject: event.subject, org_id: event.orgId, user_id: event.userId, linked_at: event.linkedAt }
        }
      ]
    case "user.password_set":
    case "user.totp_enrolment_started":
    case "user.mfa_enabled":
      return [
        {
          op: "upsert",
          table: "user_credentials",
          pk: ["user_id"],
          row: {
            user_id: event.userId,
            password_hash: after.passwordHash,
            totp_secret_sealed: after.totpSecretSealed,
            totp_pending_sealed: after.totpPendingSealed,
            mfa_enabled_at: after.mfaEnabledAt
          }
        }
      ]
  }
}
