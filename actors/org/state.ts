/** What the organization's decisions depend on: its members and its workspaces' slugs and roles. */
import { Schema } from "effect"
import { GrantableRole, OrgRole, Plan, Slug, WorkspaceRole } from "./events.ts"

const Workspace = Schema.Struct({
  slug: Slug,
  /** userId -> role */
  members: Schema.Record({ key: Schema.String, value: WorkspaceRole })
})

const SsoProvider = Schema.Struct({
  name: Schema.String,
  issuer: Schema.String,
  clientId: Schema.String,
  clientSecretSealed: Schema.String,
  registeredAt: Schema.String,
  /** ISO 8601; null until verified. */
  verifiedAt: Schema.NullOr(Schema.String)
})

export const OrgState = Schema.Union(
  Schema.TaggedStruct("Absent", {}),
  Schema.TaggedStruct("Active", {
    /** userId -> role */
    members: Schema.Record({ key: Schema.String, value: OrgRole }),
    /** workspaceId -> workspace */
    workspaces: Schema.Record({ key: Schema.String, value: Workspace }),
    // Added with access rules; defaults let states persisted before them decode.
    plan: Schema.optionalWith(Plan, { default: () => "standard" as const, exact: true }),
    requireSso: Schema.optionalWith(Schema.Boolean, { default: () => false, exact: true }),
    requireMfa: Schema.optionalWith(Schema.Boolean, { default: () => false, exact: true }),
    mfaGraceEndsAt: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null, exact: true }),
    /** providerId -> provider */
    ssoProviders: Schema.optionalWith(Schema.Record({ key: Schema.String, value: SsoProvider }), { default: () => ({}), exact: true }),
    /** name -> role */
    customRoles: Schema.optionalWith(
      Schema.Record({ key: Schema.String, value: Schema.Struct({ scope: Schema.Literal("organization", "workspace"), grants: Schema.Array(GrantableRole) }) }),
      { default: () => ({}), exact: true }
    )
  })
)
export type OrgState = typeof OrgState.Type
export type ActiveOrg = Extract<OrgState, { readonly _tag: "Active" }>

export const initialOrgState: OrgState = { _tag: "Absent" }
