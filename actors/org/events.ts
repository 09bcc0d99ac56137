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

export const Plan = Schema.Literal("standard", "enterprise")

export class PlanSet extends Schema.TaggedClass<PlanSet>()("organization.plan_set", {
  orgId: Schema.NonEmptyString,
  plan: Plan
}) {}

/** Require SSO and require two-factor (with the end of its grace period, ISO 8601). */
export class SecuritySet extends Schema.TaggedClass<SecuritySet>()("organization.security_set", {
  orgId: Schema.NonEmptyString,
  requireSso: Schema.Boolean,
  requireMfa: Schema.Boolean,
  mfaGraceEndsAt: Schema.NullOr(Schema.String)
}) {}

export class SsoProviderRegistered extends Schema.TaggedClass<SsoProviderRegistered>()("organization.sso_provider_registered", {
  orgId: Schema.NonEmptyString,
  providerId: Schema.NonEmptyString,
  name: Schema.NonEmptyTrimmedString,
  issuer: Schema.NonEmptyString,
  clientId: Schema.NonEmptyString,
  /** Encrypted with the platform's secret key; never the raw client secret. */
  clientSecretSealed: Schema.NonEmptyString,
  registeredAt: Schema.String
}) {}

/** The provider's discovery document was fetched and names the registered issuer. */
export class SsoProviderVerified extends Schema.TaggedClass<SsoProviderVerified>()("organization.sso_provider_verified", {
  orgId: Schema.NonEmptyString,
  providerId: Schema.NonEmptyString,
  verifiedAt: Schema.String
}) {}

/** Built-in roles a key may act as; never Owner or Admin. */
export const GrantableRole = Schema.Literal("org:member", "workspace:member", "workspace:viewer")

export class CustomRoleDefined extends Schema.TaggedClass<CustomRoleDefined>()("organization.custom_role_defined", {
  orgId: Schema.NonEmptyString,
  name: Slug,
  scope: Schema.Literal("organization", "workspace"),
  grants: Schema.Array(GrantableRole)
}) {}

export const OrgEvent = Schema.Union(
  OrganizationCreated,
  WorkspaceCreated,
  MemberAdded,
  WorkspaceRoleSet,
  PlanSet,
  SecuritySet,
  SsoProviderRegistered,
  SsoProviderVerified,
  CustomRoleDefined
)
export type OrgEvent = typeof OrgEvent.Type
