/**
 * Who may call what: the purpose rules (spec 5 rules 8 to 10), the place a credential may name
 * (rule 5), the role resolver (rules 2 to 7) and what a caller may invoke, as `access.get` and
 * MCP's `tools/list` state it.
 */
import { Effect, Either } from "effect"
import { OPERATOR } from "../../actors/apikey/purposes.ts"
import { accessFactsFact, customRoleFact, type OrgSecurity, placeFact, slugsFact, slugsOrIds, type Standing } from "../identity/Auth.ts"
import { decide, type Facts } from "./AccessCache.ts"
import type { Principal } from "./Capability.ts"
import { BadRequest, Forbidden, NotFound } from "../platform/Errors.ts"
import { entitled, packsOf } from "../packs/Entitlement.ts"
import { type AnyCapability, Capabilities, type InvokeRequest, offeredOn, type Registry, type Role, type Surface } from "./Capability.ts"

const forbidden = (reason: string, message: string) => new Forbidden({ reason, message })

/** How a credential's purpose decides a call (rules 8 and 9): refused outright, granted by a machine
 * purpose itself (host and telemetry keys hold no role), or left to the caller's roles. */
type PurposeDecision =
  | { readonly _tag: "refused"; readonly error: Forbidden }
  | { readonly _tag: "machine" }
  | { readonly _tag: "roles" }

const byRoles: PurposeDecision = { _tag: "roles" }

const purposeDecision = (principal: Principal, capability: AnyCapability): PurposeDecision => {
  const refused = (reason: string, message: string): PurposeDecision => ({ _tag: "refused", error: forbidden(reason, message) })
  switch (principal.credential) {
    case "unknown_purpose":
      return refused("unknown_purpose", `credential purpose '${principal.purpose}' is not recognised`)
    case "host_key":
    case "telemetry_key": {
      const machine = principal.credential === "host_key" ? "host" : "telemetry"
      return capability.machines?.includes(machine) === true
        ? { _tag: "machine" }
        : refused("purpose_not_allowed", `a ${principal.purpose} credential may not invoke ${capability.name}`)
    }
    case "gateway_key":
      return !capability.surfaces.includes("mcp") || capability.mutating || capability.sensitivity === "high"
        ? refused("purpose_not_allowed", `a ${principal.purpose} credential may invoke only non-mutating MCP capabilities that are not high-sensitivity`)
        : byRoles
    case "api_key":
      return capability.requiresPerson === true
        ? refused("session_required", `${capability.name} needs a signed-in session or a CLI login; an API key cannot call it`)
        : byRoles
    case "session":
    case "cli_login":
    case "playbook":
      return byRoles
  }
}

/**
 * Rules 8 and 9, before any role is resolved: what a machine credential may call, whether the
 * capability needs a person, and no unknown purpose at all. True when a machine purpose itself
 * grants the call.
 */
export const checkPurpose = (principal: Principal, capability: AnyCapability): Either.Either<boolean, Forbidden> => {
  const decision = purposeDecision(principal, capability)
  return decision._tag === "refused" ? Either.left(decision.error) : Either.right(decision._tag === "machine")
}

/** A person acts with their live memberships: a session, a CLI login, or an automation's run as them. */
const isPerson = (principal: Principal) =>
  principal.credential === "session" || principal.credential === "cli_login" || principal.credential === "playbook"

/** Whether the capability's grants include what the caller holds: `person` for a person, else one of the roles. */
const rolesAllow = (principal: Principal, capability: AnyCapability, roles: ReadonlyArray<Role>): boolean =>
  capability.roles.some((grant) => (grant === "person" ? isPerson(principal) : roles.includes(grant)))

/**
 * Whether the checkpoint admits the caller, holding `roles` where the capability acts, to the
 * capability: the purpose rules, then the roles (the place and the entitlement of packs are checked
 * apart). What `access.get` and the agent's tools are decided by.
 */
export const admits = (principal: Principal, capability: AnyCapability, roles: ReadonlyArray<Role>): boolean => {
  const decision = purposeDecision(principal, capability)
  return decision._tag === "machine" || (decision._tag === "roles" && rolesAllow(principal, capability, roles))
}

export interface ResolvedPlace {
  /** Null only for a session calling a capability that acts on the caller itself. */
  readonly orgId: string | null
  readonly workspaceId: string | null
}

/** Rule 5: a credential names only its own organization (and, for a workspace credential, its own workspace). */
export const placeOf = (
  principal: Principal,
  capability: AnyCapability,
  path: InvokeRequest<unknown>["path"],
  facts: Facts
): Either.Either<ResolvedPlace, BadRequest | Forbidden | NotFound> => {
  if (capability.scope === "principal") return Either.right({ orgId: principal.orgId, workspaceId: principal.workspaceId })
  if (path === null) {
    if (principal.orgId === null || (capability.scope === "workspace" && principal.workspaceId === null)) {
      return Either.left(new BadRequest({ reason: "workspace_required", message: `${capability.name} acts in a workspace: name it as <orgSlug>/<workspaceSlug>` }))
    }
    return Either.right({ orgId: principal.orgId, workspaceId: principal.workspaceId })
  }
  const named = `${path.orgSlug}/${path.workspaceSlug}`
  if (principal.orgId !== null) {
    const own = slugsOrIds(principal.orgId, principal.workspaceId, facts(slugsFact(principal.orgId, principal.workspaceId)))
    const [orgSlug, workspaceSlug] = own.split("/")
    if (path.orgSlug !== orgSlug || (workspaceSlug !== undefined && path.workspaceSlug !== workspaceSlug)) {
      return Either.left(forbidden(
        "key_scope_mismatch",
        `the path names ${named}, but this credential belongs to ${workspaceSlug === undefined ? `organization ${orgSlug}` : own}`
      ))
    }
  }
  const place = facts(placeFact(path.orgSlug, path.workspaceSlug))
  if (place === undefined) return Either.left(new NotFound({ reason: "workspace_not_found", message: `no workspace ${named}` }))
  return Either.right({ orgId: place.orgId, workspaceId: place.workspaceId })
}

/** Roles no key may hold, even through a custom role (rule 4). */
const PERSON_ONLY_ROLES: ReadonlySet<string> = new Set(["org:owner", "workspace:admin"])

/** Rule 7 on organization and workspace routes, before any role: SSO and two-factor as the organization requires them. */
const standingRefusal = (principal: Principal, place: ResolvedPlace, security: OrgSecurity, standing: Standing, now: number): Forbidden | undefined => {
  const owner = standing.orgRole === "owner"
  // operator-issued machine credentials have no person behind them to check
  if (security.requireSso && !owner && principal.attributedTo !== OPERATOR) {
    const fromVerifiedProvider = principal.credential === "session"
      ? principal.sso?.orgId === place.orgId && standing.sessionProviderVerified
      : standing.ssoLinked
    if (!fromVerifiedProvider) {
      return forbidden(
        "sso_required",
        principal.credential === "session"
          ? "this organization requires signing in through one of its verified SSO providers"
          : "this organization requires SSO, and this credential's creator has not signed in through a verified SSO provider"
      )
    }
  }
  if (principal.credential === "session" && security.requireMfa && !standing.mfa
    && (security.mfaGraceEndsAt === null || security.mfaGraceEndsAt.getTime() <= now)) {
    return forbidden("mfa_required", "this organization requires two-factor authentication; set it up to continue")
  }
  return undefined
}

/**
 * Rule 7 on organization and workspace routes, then the role resolver (rules 2 to 6): a key acts
 * with its own role, a person (session or CLI login) with their live memberships.
 */
export const rolesOf = (
  principal: Principal,
  capability: AnyCapability,
  place: ResolvedPlace,
  now: number,
  facts: Facts
): Either.Either<ReadonlyArray<Role>, Forbidden> => {
  if (place.orgId === null) {
    // a session acting on itself (its password, its two-factor): no organization, no roles
    if (capability.scope === "principal" && principal.credential === "session" && capability.roles.includes("person")) return Either.right([])
    return Either.left(new Forbidden({ message: `${capability.name} needs an organization` }))
  }
  const { security, standing } = facts(accessFactsFact(place.orgId, place.workspaceId, principal.attributedTo, principal.sso?.providerId ?? null))
  // a CLI login's person is rechecked on every request: leaving the organization ends its use
  if (isPerson(principal) && standing.orgRole === null) {
    return Either.left(forbidden("not_a_member", "the signed-in person is not a member of this organization"))
  }
  const refusal = capability.scope === "principal" ? undefined : standingRefusal(principal, place, security, standing, now)
  if (refusal !== undefined) return Either.left(refusal)
  const roles = rolesIn(principal, { orgId: place.orgId, workspaceId: place.workspaceId }, security, standing, facts)
  if (!rolesAllow(principal, capability, roles)) {
    return Either.left(new Forbidden({ message: `this credential (role ${roles.join(", ") || "none"}) may not invoke ${capability.name}` }))
  }
  return Either.right(roles)
}

/** The roles the caller holds in a place of an organization: a person's live memberships, a key's own role. */
const rolesIn = (principal: Principal, place: ResolvedPlace & { readonly orgId: string }, security: OrgSecurity, standing: Standing, facts: Facts) =>
  isPerson(principal) ? personRoles(standing) : keyRoles(principal, place, security, facts)

/** The roles a credential holds in its own place (its workspace, or its organization); none without one. */
const ownRoles = (principal: Principal) => {
  const { orgId, workspaceId } = principal
  if (orgId === null) return Effect.succeed<ReadonlyArray<Role>>([])
  return decide((facts) => {
    const { security, standing } = facts(accessFactsFact(orgId, workspaceId, principal.attributedTo, principal.sso?.providerId ?? null))
    return rolesIn(principal, { orgId, workspaceId }, security, standing, facts)
  })
}

/**
 * The capabilities a caller holding `roles` may invoke on `surface`: offered there, claimed by a
 * pack the organization enabled (`packs`), and admitted by the purpose and role rules (`admits`).
 * What `access.get` states and MCP's `tools/list` lists.
 */
export const invocable = (registry: Registry, principal: Principal, roles: ReadonlyArray<Role>, packs: ReadonlySet<string>, surface: Surface) =>
  registry.all.filter((c) => offeredOn(c, surface) && entitled(c, packs) && admits(principal, c, roles))

/** `invocable` for a credential in its own place, as it stands now. */
export const invocableByCredential = (principal: Principal, surface: Surface) =>
  Effect.gen(function* () {
    const registry = yield* Capabilities
    const roles = yield* ownRoles(principal)
    return invocable(registry, principal, roles, yield* packsOf(principal.orgId), surface)
  })

const personRoles = (standing: Standing): ReadonlyArray<Role> => [
  ...(standing.orgRole === null ? [] : [`org:${standing.orgRole}` as Role]),
  ...(standing.workspaceRole === null ? [] : [`workspace:${standing.workspaceRole}` as Role])
]

const keyRoles = (principal: Principal, place: ResolvedPlace, security: OrgSecurity, facts: Facts): ReadonlyArray<Role> => {
  const scope = principal.workspaceId === null ? "organization" : "workspace"
  const inOwnPlace = principal.workspaceId === null || principal.workspaceId === place.workspaceId
  if (!inOwnPlace) return []
  if (principal.customRole !== null && security.plan === "enterprise" && place.orgId !== null) {
    const grants = facts(customRoleFact(place.orgId, principal.customRole, scope))
    if (grants !== undefined) return grants.filter((g) => !PERSON_ONLY_ROLES.has(g)) as ReadonlyArray<Role>
  }
  return scope === "organization" ? ["org:member"] : ["workspace:member"]
}
