/** Read models: `organizations`, `workspaces`, `org_members`, `workspace_members`. */
import { securityAuditRow } from "../audit/security.ts"
import type { EventContext, RowOp } from "../kernel.ts"
import type { OrgEvent } from "./events.ts"
import type { OrgState } from "./state.ts"

const settingsRow = (after: OrgState, orgId: string): RowOp => ({
  op: "upsert",
  table: "org_settings",
  pk: ["org_id"],
  row: after._tag === "Active"
    ? { org_id: orgId, plan: after.plan, require_sso: after.requireSso, require_mfa: after.requireMfa, mfa_grace_ends_at: after.mfaGraceEndsAt }
    : { org_id: orgId, plan: "standard", require_sso: false, require_mfa: false, mfa_grace_ends_at: null }
})

export const project = (after: OrgState, event: OrgEvent, ctx: EventContext): ReadonlyArray<RowOp> => {
  switch (event._tag) {
    case "organization.created":
      return [
        {
          op: "upsert",
          table: "organizations",
          pk: ["org_id"],
          row: { org_id: event.orgId, slug: event.slug, name: event.name, created_at: event.createdAt }
        },
        settingsRow(after, event.orgId)
      ]
    case "workspace.created":
      return [
        {
          op: "upsert",
          table: "workspaces",
          pk: ["workspace_id"],
          row: {
            workspace_id: event.workspaceId,
            org_id: event.orgId,
            slug: event.slug,
            name: event.name,
            created_at: event.createdAt
          }
        }
      ]
    case "organization.member_added":
      return [
        {
          op: "upsert",
          table: "org_members",
          pk: ["org_id", "user_id"],
          row: { org_id: event.orgId, user_id: event.userId, role: event.role }
        }
      ]
    case "workspace.member_role_set":
      return [
        {
          op: "upsert",
          table: "workspace_members",
          pk: ["workspace_id", "user_id"],
          row: { workspace_id: event.workspaceId, user_id: event.userId, role: event.role }
        }
      ]
    case "organization.plan_set":
      return [settingsRow(after, event.orgId)]
    case "organization.security_set":
      return [
        settingsRow(after, event.orgId),
        securityAuditRow(ctx, {
          orgId: event.orgId,
          workspaceId: null,
          event: event._tag,
          detail: { requireSso: event.requireSso, requireMfa: event.requireMfa, mfaGraceEndsAt: event.mfaGraceEndsAt }
        })
      ]
    case "organization.sso_provider_registered":
    case "organization.sso_provider_verified": {
      const provider = after._tag === "Active" ? after.ssoProviders[event.providerId] : undefined
      if (provider === undefined) return []
      return [
        {
          op: "upsert",
          table: "sso_providers",
          pk: ["provider_id"],
          row: {
            provider_id: event.providerId,
            org_id: event.orgId,
            name: provider.name,
            issuer: provider.issuer,
            client_id: provider.clientId,
            client_secret_sealed: provider.clientSecretSealed,
            status: provider.verifiedAt === null ? "registered" : "verified",
            created_at: provider.registeredAt,
            verified_at: provider.verifiedAt
          }
        },
        securityAuditRow(ctx, { orgId: event.orgId, workspaceId: null, event: event._tag, detail: { providerId: event.providerId, issuer: provider.issuer } })
      ]
    }
    case "organization.custom_role_defined":
      return [
        {
          op: "upsert",
          table: "custom_roles",
          pk: ["org_id", "name"],
          row: { org_id: event.orgId, name: event.name, scope: event.scope, grants: event.grants }
        }
      ]
  }
}
