/** Rejections of the organization actor. */
import { Schema } from "effect"
import { OrgRole } from "./events.ts"

export class OrganizationAlreadyExists extends Schema.TaggedError<OrganizationAlreadyExists>()(
  "OrganizationAlreadyExists",
  { orgId: Schema.String }
) {
  override get message() {
    return `organization ${this.orgId} already exists`
  }
}

export class OrganizationNotFound extends Schema.TaggedError<OrganizationNotFound>()("OrganizationNotFound", {
  orgId: Schema.String
}) {
  override get message() {
    return `organization ${this.orgId} does not exist`
  }
}

export class WorkspaceAlreadyExists extends Schema.TaggedError<WorkspaceAlreadyExists>()("WorkspaceAlreadyExists", {
  orgId: Schema.String,
  workspaceId: Schema.String
}) {
  override get message() {
    return `workspace ${this.workspaceId} already exists in organization ${this.orgId}`
  }
}

export class WorkspaceSlugTaken extends Schema.TaggedError<WorkspaceSlugTaken>()("WorkspaceSlugTaken", {
  orgId: Schema.String,
  slug: Schema.String
}) {
  override get message() {
    return `organization ${this.orgId} already has a workspace with slug '${this.slug}'`
  }
}

export class WorkspaceNotFound extends Schema.TaggedError<WorkspaceNotFound>()("WorkspaceNotFound", {
  orgId: Schema.String,
  workspaceId: Schema.String
}) {
  override get message() {
    return `workspace ${this.workspaceId} does not exist in organization ${this.orgId}`
  }
}

/** Adding a member again with another role: changing a role is not adding a member. */
export class AlreadyMember extends Schema.TaggedError<AlreadyMember>()("AlreadyMember", {
  orgId: Schema.String,
  userId: Schema.String,
  role: OrgRole
}) {
  override get message() {
    return `user ${this.userId} is already a member of organization ${this.orgId} as ${this.role}`
  }
}

export class NotOrgMember extends Schema.TaggedError<NotOrgMember>()("NotOrgMember", {
  orgId: Schema.String,
  userId: Schema.String
}) {
  override get message() {
    return `user ${this.userId} is not a member of organization ${this.orgId}`
  }
}

/** Require SSO with no verified provider would lock out everyone but the Owners. */
export class NoVerifiedSsoProvider extends Schema.TaggedError<NoVerifiedSsoProvider>()("NoVerifiedSsoProvider", {
  orgId: Schema.String
}) {
  override get message() {
    return "verify an SSO provider before requiring SSO"
  }
}

export class SsoProviderNotFound extends Schema.TaggedError<SsoProviderNotFound>()("SsoProviderNotFound", {
  orgId: Schema.String,
  providerId: Schema.String
}) {
  override get message() {
    return `no SSO provider ${this.providerId} in this organization`
  }
}

export class SsoProviderExists extends Schema.TaggedError<SsoProviderExists>()("SsoProviderExists", {
  orgId: Schema.String,
  providerId: Schema.String
}) {
  override get message() {
    return `SSO provider ${this.providerId} already exists`
  }
}

/** Custom roles are an enterprise feature (spec 5 rule 4). */
export class EnterprisePlanRequired extends Schema.TaggedError<EnterprisePlanRequired>()("EnterprisePlanRequired", {
  orgId: Schema.String
}) {
  override get message() {
    return "custom roles need the enterprise plan"
  }
}

/** A workspace-scoped custom role grants only workspace roles. */
export class GrantOutOfScope extends Schema.TaggedError<GrantOutOfScope>()("GrantOutOfScope", {
  role: Schema.String,
  scope: Schema.String
}) {
  override get message() {
    return `a ${this.scope} role cannot grant ${this.role}`
  }
}

export const OrgError = Schema.Union(
  NoVerifiedSsoProvider,
  SsoProviderNotFound,
  SsoProviderExists,
  EnterprisePlanRequired,
  GrantOutOfScope,
  OrganizationAlreadyExists,
  OrganizationNotFound,
  WorkspaceAlreadyExists,
  WorkspaceSlugTaken,
  WorkspaceNotFound,
  AlreadyMember,
  NotOrgMember
)
export type OrgError = typeof OrgError.Type
