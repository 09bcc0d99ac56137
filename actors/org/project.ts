/** Read models: `organizations`, `workspaces`, `org_members`, `workspace_members`. */
import type { RowOp } from "../kernel.ts"
import type { OrgEvent } from "./events.ts"
import type { OrgState } from "./state.ts"

export const project = (_after: OrgState, event: OrgEvent): ReadonlyArray<RowOp> => {
  switch (event._tag) {
    case "organization.created":
      return [
        {
          op: "upsert",
          table: "organizations",
          pk: ["org_id"],
          row: { org_id: event.orgId, slug: event.slug, name: event.name, created_at: event.createdAt }
        }
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
  }
}
