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

export const OrgError = Schema.Union(
  OrganizationAlreadyExists,
  OrganizationNotFound,
  WorkspaceAlreadyExists,
  WorkspaceSlugTaken,
  WorkspaceNotFound,
  AlreadyMember,
  NotOrgMember
)
export type OrgError = typeof OrgError.Type
