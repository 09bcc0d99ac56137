/**
 * Read models (migration 0029): `machine_policies`, the current policy bundle of each workspace
 * that set one; `workspace_repositories`, the repositories its machines get Git credentials for.
 */
import type { EventContext, Json, RowOp } from "../kernel.ts"
import type { FleetEvent } from "./events.ts"
import type { FleetState } from "./state.ts"

export const project = (_after: FleetState, event: FleetEvent, ctx: EventContext): ReadonlyArray<RowOp> => {
  switch (event._tag) {
    case "fleet.policy_set":
      return [{
        op: "upsert",
        table: "machine_policies",
        pk: ["workspace_id"],
        row: { workspace_id: event.workspaceId, org_id: event.orgId, version: event.version, rules: event.rules as Json, set_by: ctx.actor, set_at: event.at }
      }]
    case "fleet.repository_registered":
      return [{
        op: "upsert",
        table: "workspace_repositories",
        pk: ["workspace_id", "repository"],
        row: { workspace_id: event.workspaceId, org_id: event.orgId, repository: event.repository, registered_by: ctx.actor, registered_at: event.at }
      }]
    case "fleet.repository_removed":
      return [{ op: "delete", table: "workspace_repositories", pk: ["workspace_id", "repository"], row: { workspace_id: event.workspaceId, repository: event.repository } }]
  }
}
