/** Events of the organization actor (key `org:<orgId>`). A published `_tag` is never renamed. */
import { Schema } from "effect"

/** URL handle of an organization or workspace: lowercase letters, digits and hyphens. */
export const Slug = Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9-]{0,62}$/))

/** Organization roles: Owner and Org member. */
export const OrgRole = Schema.Literal("owner", "member")
export type OrgRole = typeof OrgRole.Type

export const WorkspaceRole = Schema.Literal("admin", "member", "viewer")
export type WorkspaceRole = typeof WorkspaceRole.Type

export class OrganizationCreated extends Schema.TaggedClass<OrganizationCreated>()("organization.created", {
  orgId: Schema.NonEmptyString,
  slug: Slug,
  name: Schema.NonEmptyTrimmedString,
  /** ISO 8601, the command's time. */
  createdAt: Schema.String
}) {}

export class WorkspaceCreated extends Schema.TaggedClass<WorkspaceCreated>()("workspace.created", {
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  slug: Slug,
  name: Schema.NonEmptyTrimmedString,
  createdAt: Schema.String
}) {}

export class MemberAdded extends Schema.TaggedClass<MemberAdded>()("organization.member_added", {
  orgId: Schema.NonEmptyString,
  userId: Schema.NonEmptyString,
  role: OrgRole
}) {}

export class WorkspaceRoleSet extends Schema.TaggedClass<WorkspaceRoleSet>()("workspace.member_role_set", {
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  userId: Schema.NonEmptyString,
  role: WorkspaceRole
}) {}

export const OrgEvent = Schema.Union(OrganizationCreated, WorkspaceCreated, MemberAdded, WorkspaceRoleSet)
export type OrgEvent = typeof OrgEvent.Type
