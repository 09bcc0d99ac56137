import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import {
  AlreadyMember,
  EnterprisePlanRequired,
  GrantOutOfScope,
  NoVerifiedSsoProvider,
  NotOrgMember,
  OrganizationAlreadyExists,
  OrganizationNotFound,
  WorkspaceAlreadyExists,
  WorkspaceNotFound,
  WorkspaceSlugTaken,
  SsoProviderExists,
  SsoProviderNotFound,
  type OrgError
} from "./errors.ts"
import {
  CustomRoleDefined,
  MemberAdded,
  OrganizationCreated,
  PlanSet,
  SecuritySet,
  SsoProviderRegistered,
  SsoProviderVerified,
  WorkspaceCreated,
  WorkspaceRoleSet,
  type OrgEvent
} from "./events.ts"
import type { AddMember, CreateOrganization, CreateWorkspace, OrgCommand, SetSecurity, SetWorkspaceRole } from "./protocol.ts"
import type { ActiveOrg, OrgState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<OrgEvent>, OrgError>

const nothing: Decision = Either.right([])

export const decide = (state: OrgState, command: OrgCommand, meta: CommandMeta): Decision => {
  if (command._tag === "CreateOrganization") return createOrganization(state, command, meta)
  if (state._tag === "Absent") return Either.left(new OrganizationNotFound({ orgId: command.orgId }))
  switch (command._tag) {
    case "CreateWorkspace":
      return createWorkspace(state, command, meta)
    case "AddMember":
      return addMember(state, command)
    case "SetWorkspaceRole":
      return setWorkspaceRole(state, command)
    case "SetPlan":
      return state.plan === command.plan ? nothing : Either.right([new PlanSet({ orgId: command.orgId, plan: command.plan })])
    case "SetSecurity":
      return setSecurity(state, command)
    case "RegisterSsoProvider": {
      const { _tag, ...fields } = command
      if (own(state.ssoProviders, command.providerId) !== undefined) {
        return Either.left(new SsoProviderExists({ orgId: command.orgId, providerId: command.providerId }))
      }
      return Either.right([new SsoProviderRegistered({ ...fields, registeredAt: meta.at })])
    }
    case "VerifySsoProvider": {
      const { orgId, providerId } = command
      const provider = own(state.ssoProviders, providerId)
      if (provider === undefined) return Either.left(new SsoProviderNotFound({ orgId, providerId }))
      return provider.verifiedAt !== null ? nothing : Either.right([new SsoProviderVerified({ orgId, providerId, verifiedAt: meta.at })])
    }
    case "DefineCustomRole": {
      const { orgId, name, scope, grants } = command
      if (state.plan !== "enterprise") return Either.left(new EnterprisePlanRequired({ orgId }))
      const outOfScope = grants.find((g) => scope === "workspace" && !g.startsWith("workspace:"))
      if (outOfScope !== undefined) return Either.left(new GrantOutOfScope({ role: outOfScope, scope }))
      return Either.right([new CustomRoleDefined({ orgId, name, scope, grants })])
    }
  }
}

// Turning a requirement on that is already on keeps its grace period; settings that would not
// change record nothing.
const setSecurity = (state: ActiveOrg, command: SetSecurity): Decision => {
  const requireSso = command.requireSso ?? state.requireSso
  const requireMfa = command.requireMfa ?? state.requireMfa
  if (requireSso && !state.requireSso && !Object.values(state.ssoProviders).some((p) => p.verifiedAt !== null)) {
    return Either.left(new NoVerifiedSsoProvider({ orgId: command.orgId }))
  }
  const mfaGraceEndsAt = !requireMfa ? null : state.requireMfa ? state.mfaGraceEndsAt : command.mfaGraceEndsAt
  if (requireSso === state.requireSso && requireMfa === state.requireMfa && mfaGraceEndsAt === state.mfaGraceEndsAt) return nothing
  return Either.right([new SecuritySet({ orgId: command.orgId, requireSso, requireMfa, mfaGraceEndsAt })])
}

const createOrganization = (state: OrgState, command: CreateOrganization, meta: CommandMeta): Decision => {
  const { orgId, slug, name } = command
  if (state._tag === "Active") return Either.left(new OrganizationAlreadyExists({ orgId }))
  return Either.right([new OrganizationCreated({ orgId, slug, name, createdAt: meta.at })])
}

const createWorkspace = (state: ActiveOrg, command: CreateWorkspace, meta: CommandMeta): Decision => {
  const { orgId, workspaceId, slug, name } = command
  if (own(state.workspaces, workspaceId)) return Either.left(new WorkspaceAlreadyExists({ orgId, workspaceId }))
  if (Object.values(state.workspaces).some((w) => w.slug === slug)) {
    return Either.left(new WorkspaceSlugTaken({ orgId, slug }))
  }
  return Either.right([new WorkspaceCreated({ orgId, workspaceId, slug, name, createdAt: meta.at })])
}

// Adding a member with the role they already hold is a no-op, so a repeated invitation is harmless;
// another role is a role change, which this command does not make.
const addMember = (state: ActiveOrg, command: AddMember): Decision => {
  const { orgId, userId, role } = command
  const current = own(state.members, userId)
  if (current === role) return nothing
  if (current !== undefined) return Either.left(new AlreadyMember({ orgId, userId, role: current }))
  return Either.right([new MemberAdded({ orgId, userId, role })])
}

const setWorkspaceRole = (state: ActiveOrg, command: SetWorkspaceRole): Decision => {
  const { orgId, workspaceId, userId, role } = command
  const workspace = own(state.workspaces, workspaceId)
  if (workspace === undefined) return Either.left(new WorkspaceNotFound({ orgId, workspaceId }))
  if (own(state.members, userId) === undefined) return Either.left(new NotOrgMember({ orgId, userId }))
  if (own(workspace.members, userId) === role) return nothing
  return Either.right([new WorkspaceRoleSet({ orgId, workspaceId, userId, role })])
}

// Ids are keys of plain objects in the state; `in` or indexing would also find `constructor`.
const own = <A>(record: Readonly<Record<string, A>>, key: string): A | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined
