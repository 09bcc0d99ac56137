/** Read model (migration 0017): `plugin_credentials`, one row per credential once it holds a secret
 * or tokens; every secret column an envelope. An authorization under way stays in the actor. */
import type { EventContext, Json, RowOp } from "../kernel.ts"
import type { CredentialEvent } from "./events.ts"
import type { CredentialState } from "./state.ts"

export const project = (after: CredentialState, _event: CredentialEvent, _ctx: EventContext): ReadonlyArray<RowOp> => {
  if (after._tag !== "Live" || after.status === null) return []
  const sealed = [after.secret, after.accessToken, after.refreshToken, after.clientSecret].find((v) => v !== null)
  return [
    {
      op: "upsert",
      table: "plugin_credentials",
      pk: ["credential_id"],
      row: {
        credential_id: after.credentialId,
        org_id: after.orgId,
        workspace_id: after.workspaceId,
        listing_id: after.listingId,
        auth_kind: after.authKind,
        access_token_enc: after.accessToken?.ciphertext ?? null,
        refresh_token_enc: after.refreshToken?.ciphertext ?? null,
        secret_enc: after.secret?.ciphertext ?? null,
        oauth_client_secret_enc: after.clientSecret?.ciphertext ?? null,
        token_kms_key_id: sealed?.keyId ?? null,
        oauth_client_id: after.clientId,
        scopes: after.scopes as unknown as Json,
        expires_at: after.expiresAt,
        status: after.status,
        last_refreshed_at: after.lastRefreshedAt,
        oauth: after.origin as unknown as Json,
        created_at: after.createdAt,
        updated_at: after.updatedAt
      }
    }
  ]
}
