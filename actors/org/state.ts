/** What the organization's decisions depend on: its members and its workspaces' slugs and roles. */
import { Schema } from "effect"
import { OrgRole, Slug, WorkspaceRole } from "./events.ts"

const Workspace = Schema.Struct({
  slug: Slug,
  /** userId -> role */
  members: Schema.Record({ key: Schema.String, value: WorkspaceRole })
})

export const OrgState = Schema.Union(
  Schema.TaggedStruct("Absent", {}),
  Schema.TaggedStruct("Active", {
    /** userId -> role */
    members: Schema.Record({ key: Schema.String, value: OrgRole }),
    /** workspaceId -> workspace */
    workspaces: Schema.Record({ key: Schema.String, value: Workspace })
  })
)
export type OrgState = typeof OrgState.Type
export type ActiveOrg = Extract<OrgState, { readonly _tag: "Active" }>

export const initialOrgState: OrgState = { _tag: "Absent" }
