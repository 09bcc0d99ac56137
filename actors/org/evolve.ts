import type { OrgEvent } from "./events.ts"
import type { ActiveOrg, OrgState } from "./state.ts"

export const evolve = (state: OrgState, event: OrgEvent): OrgState => {
  if (event._tag === "organization.created") {
    return {
      _tag: "Active",
      members: {},
      workspaces: {},
      plan: "standard",
      requireSso: false,
      requireMfa: false,
      mfaGraceEndsAt: null,
      ssoProviders: {},
      customRoles: {}
    }
  }
  const org = active(state, event)
  switch (event._tag) {
    case "workspace.created":
      return { ...org, workspaces: { ...org.workspaces, [event.workspaceId]: { slug: event.slug, members: {} } } }
    case "organization.member_added":
      return { ...org, members: { ...org.members, [event.userId]: event.role } }
    case "workspace.member_role_set": {
      const workspace = org.workspaces[event.workspaceId]
      const members = { ...workspace.members, [event.userId]: event.role }
      return { ...org, workspaces: { ...org.workspaces, [event.workspaceId]: { ...workspace, members } } }
    }
    case "organization.plan_set":
      return { ...org, plan: event.plan }
    case "organization.security_set":
      return { ...org, requireSso: event.requireSso, requireMfa: event.requireMfa, mfaGraceEndsAt: event.mfaGraceEndsAt }
    case "organization.sso_provider_registered": {
      const { name, issuer, clientId, clientSecretSealed, registeredAt } = event
      return { ...org, ssoProviders: { ...org.ssoProviders, [event.providerId]: { name, issuer, clientId, clientSecretSealed, registeredAt, verifiedAt: null } } }
    }
    case "organization.sso_provider_verified": {
      const provider = org.ssoProviders[event.providerId]
      return { ...org, ssoProviders: { ...org.ssoProviders, [event.providerId]: { ...provider, verifiedAt: event.verifiedAt } } }
    }
    case "organization.custom_role_defined":
      return { ...org, customRoles: { ...org.customRoles, [event.name]: { scope: event.scope, grants: event.grants } } }
  }
}

// The decider never emits these events for an absent organization; a log that does is corrupt.
const active = (state: OrgState, event: OrgEvent): ActiveOrg => {
  if (state._tag === "Active") return state
  throw new Error(`${event._tag} for organization ${event.orgId} before organization.created`)
}
