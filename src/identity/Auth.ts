/**
 * Who is calling: a bearer credential (an API key, a CLI login, or a machine key, told apart by
 * the reserved scope key `purpose`) or a browser session cookie, resolved against the read
 * models; and what the caller may do in the place a path names (spec 5).
 */
import { Clock, Effect, Either } from "effect"
import type postgres from "postgres"
import { type AccessCache, decide, type Fact, type Facts, lookupFact, type Table } from "../checkpoint/AccessCache.ts"
import { parseBearer, parseSessionToken, verifySecret } from "./ApiKeyToken.ts"
import type { Db, DbError, DbService } from "../../streams/Db.ts"
import { Unauthorized } from "../platform/Errors.ts"
import type { CredentialKind, Principal } from "../checkpoint/Capability.ts"
import { accessFactsRow, apiKeyByLookupId, customRoleGrantsOf, placeBySlugs, placeSlugs, sessionByLookupId } from "./Queries.ts"


/** `purpose` scope values and the kinds they make (rule 9); no purpose is an ordinary key. */
export const PURPOSES = {
  cli_session_v1: "cli_login",
  svc_host_v1: "host_key",
  svc_gateway_v1: "gateway_key",
  svc_telemetry_v1: "telemetry_key"
} as const satisfies Record<string, CredentialKind>
export type Purpose = keyof typeof PURPOSES

export const isPurpose = (value: string): value is Purpose => Object.hasOwn(PURPOSES, value)

/** The `actor` of commands and events a principal causes. */
export const actorOf = (principal: Principal): string =>
  principal.userId !== null && (principal.credential === "session" || principal.credential === "playbook")
    ? `user:${principal.userId}`
    : `key:${principal.apiKeyId}`

const unauthorized = (reason: Unauthorized["reason"], message: string) => new Unauthorized({ reason, message })

export const SESSION_COOKIE = "svc_session"

/** The session token in a `Cookie` header, if any. */
export const sessionCookieOf = (cookie: string | undefined): string | undefined => {
  if (cookie === undefined) return undefined
  for (const part of cookie.split(";")) {
    const eq = part.indexOf("=")
    if (eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim()
  }
  return undefined
}

export interface Credentials {
  readonly authorization: string | undefined
  /** The `Cookie` header; consulted only when there is no Authorization header. */
  readonly cookie?: string | undefined
}

/** A credential as the cache keeps it: what is checked on every use, and whom it makes the caller. */
interface CredentialRecord {
  readonly secretHash: string
  /** Revoked (a key) or ended (a session). */
  readonly void: boolean
  readonly expiresAt: number | null
  readonly principal: Principal
}

const credentialOwner = (record: CredentialRecord | undefined) =>
  record === undefined ? undefined : { orgId: record.principal.orgId, credentialId: record.principal.apiKeyId ?? record.principal.sessionId }

/** The credential of a table whose token has this lookup id, if any. */
const credentialFact =
  <Row>(table: Table, what: string, find: (db: DbService, lookupId: string) => Promise<Row | undefined>, record: (row: Row) => CredentialRecord) =>
  (lookupId: string): Fact<CredentialRecord | undefined> => ({
    table,
    key: lookupId,
    what,
    load: async (db) => {
      const found = await find(db, lookupId)
      return found === undefined ? undefined : record(found)
    },
    ownerOf: credentialOwner
  })

/** The decision made afresh on every use of a (possibly cached) credential. */
const admit = (record: CredentialRecord | undefined, raw: string, now: number, invalid: string, expired: string): Either.Either<Principal, Unauthorized> => {
  // the same answer for an unknown, a wrong and a revoked credential: nothing to learn by probing
  if (record === undefined || !verifySecret(raw, record.secretHash) || record.void) return Either.left(unauthorized("invalid_credential", invalid))
  if (record.expiresAt !== null && record.expiresAt <= now) return Either.left(unauthorized("expired_credential", expired))
  return Either.right(record.principal)
}

/** Who the credentials make the caller at `now`: a session cookie when there is no Authorization header, else a bearer key. */
export const principalOf = (credentials: Credentials, facts: Facts, now: number): Either.Either<Principal, Unauthorized> => {
  const token = credentials.authorization === undefined || credentials.authorization.trim() === ""
    ? sessionCookieOf(credentials.cookie)
    : undefined
  if (token !== undefined) {
    const parsed = parseSessionToken(token)
    if (parsed === undefined) return Either.left(unauthorized("malformed_credential", "the session cookie is not valid"))
    return admit(facts(sessionFact(parsed.lookupId)), parsed.raw, now, "the session is not valid; sign in again", "the session has expired; sign in again")
  }
  const bearer = parseBearer(credentials.authorization)
  if (bearer._tag === "Missing") return Either.left(unauthorized("missing_credential", "Authorization: Bearer <API key> or a sign-in session is required"))
  if (bearer._tag === "Malformed") return Either.left(unauthorized("malformed_credential", "the bearer credential is not an API key"))
  return admit(facts(keyFact(bearer.lookupId)), bearer.raw, now, "the API key is not valid", "the API key has expired")
}

export const authenticate = (credentials: Credentials): Effect.Effect<Principal, Unauthorized | DbError, Db | AccessCache> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.flatten(decide((facts) => principalOf(credentials, facts, now))))

const keyRecord = (key: postgres.Row): CredentialRecord => {
  const purpose: string | null = key.purpose
  const credential: CredentialKind = purpose === null ? "api_key" : isPurpose(purpose) ? PURPOSES[purpose] : "unknown_purpose"
  return {
    secretHash: key.secret_hash,
    void: key.status === "revoked",
    expiresAt: key.expires_at === null ? null : (key.expires_at as Date).getTime(),
    principal: {
      credential,
      apiKeyId: key.key_id,
      sessionId: null,
      orgId: key.org_id,
      workspaceId: key.workspace_id,
      userId: credential === "cli_login" ? key.created_by : null,
      attributedTo: key.created_by,
      customRole: key.custom_role,
      machineId: key.machine_id,
      purpose,
      sso: null
    }
  }
}

const sessionRecord = (session: postgres.Row): CredentialRecord => ({
  secretHash: session.secret_hash,
  void: session.ended_at !== null,
  expiresAt: (session.expires_at as Date).getTime(),
  principal: {
    credential: "session",
    apiKeyId: null,
    sessionId: session.session_id,
    orgId: null,
    workspaceId: null,
    userId: session.user_id,
    attributedTo: session.user_id,
    customRole: null,
    machineId: null,
    purpose: null,
    sso: session.sso_org_id === null ? null : { orgId: session.sso_org_id, providerId: session.sso_provider_id }
  }
})

const keyFact = credentialFact("keys", "find api key", apiKeyByLookupId, keyRecord)
const sessionFact = credentialFact("sessions", "find session", sessionByLookupId, sessionRecord)

/** The organization and workspace a path names, if both exist. */
export const placeFact = (orgSlug: string, workspaceSlug: string): Fact<{ readonly orgId: string; readonly workspaceId: string } | undefined> => ({
  table: "places",
  key: `${orgSlug}\n${workspaceSlug}`,
  what: "find workspace",
  load: (db) => placeBySlugs(db, orgSlug, workspaceSlug),
  ownerOf: (place) => (place === undefined ? undefined : { orgId: place.orgId, credentialId: null })
})

export const findPlace = (orgSlug: string, workspaceSlug: string) => lookupFact(placeFact(orgSlug, workspaceSlug))

/** Slugs of an organization and (optionally) one of its workspaces, for messages; undefined when not (yet) in the read model. */
export const slugsFact = (orgId: string, workspaceId: string | null): Fact<string | undefined> => ({
  table: "slugs",
  key: `${orgId}\n${workspaceId ?? ""}`,
  what: "name workspace",
  load: async (db) => {
    const row = await placeSlugs(db, orgId, workspaceId)
    if (row === undefined) return undefined
    return workspaceId === null ? row.orgSlug : `${row.orgSlug}/${row.workspaceSlug ?? workspaceId}`
  },
  ownerOf: (slugs) => (slugs === undefined ? undefined : { orgId, credentialId: null })
})

/** What `slugsFact` found, or, for an organization not (yet) in the read model, its ids. */
export const slugsOrIds = (orgId: string, workspaceId: string | null, slugs: string | undefined) =>
  slugs ?? (workspaceId === null ? orgId : `${orgId}/${workspaceId}`)

/** Slugs of an organization and (optionally) one of its workspaces, for messages. */
export const slugsOf = (orgId: string, workspaceId: string | null) =>
  Effect.map(lookupFact(slugsFact(orgId, workspaceId)), (slugs) => slugsOrIds(orgId, workspaceId, slugs))

/** What the access rules need to know about a person (or a key's creator) in one place. */
export interface Standing {
  readonly orgRole: "owner" | "member" | null
  readonly workspaceRole: "admin" | "member" | "viewer" | null
  /** Two-factor is set up. */
  readonly mfa: boolean
  /** Linked to a verified SSO provider of the organization. */
  readonly ssoLinked: boolean
  /** The session's SSO provider is a verified provider of the organization. */
  readonly sessionProviderVerified: boolean
}

export interface OrgSecurity {
  readonly plan: string
  readonly requireSso: boolean
  readonly requireMfa: boolean
  readonly mfaGraceEndsAt: Date | null
}

export interface AccessFacts {
  readonly security: OrgSecurity
  readonly standing: Standing
}

/** The organization's security settings and plan, and, for a person, their standing there: one query. */
export const accessFactsFact = (orgId: string, workspaceId: string | null, userId: string | null, sessionProviderId: string | null): Fact<AccessFacts> => ({
  table: "facts",
  key: `${orgId}\n${workspaceId ?? ""}\n${userId ?? ""}\n${sessionProviderId ?? ""}`,
  what: "access facts",
  load: async (db) => {
    const row = await accessFactsRow(db, orgId, workspaceId, userId, sessionProviderId)
    const security: OrgSecurity = {
      plan: row?.plan ?? "standard",
      requireSso: row?.require_sso ?? false,
      requireMfa: row?.require_mfa ?? false,
      mfaGraceEndsAt: row?.mfa_grace_ends_at ?? null
    }
    const standing: Standing = {
      orgRole: row?.org_role ?? null,
      workspaceRole: row?.workspace_role ?? null,
      mfa: row?.mfa === true,
      ssoLinked: row?.sso_linked === true,
      sessionProviderVerified: row?.session_provider_verified === true
    }
    return { security, standing }
  },
  ownerOf: () => ({ orgId, credentialId: null })
})

export const accessFacts = (orgId: string, workspaceId: string | null, userId: string | null, sessionProviderId: string | null) =>
  lookupFact(accessFactsFact(orgId, workspaceId, userId, sessionProviderId))

/** The built-in roles a custom role grants, if the organization defines it with that scope. */
export const customRoleFact = (orgId: string, name: string, scope: "organization" | "workspace"): Fact<ReadonlyArray<string> | undefined> => ({
  table: "roles",
  key: `${orgId}\n${name}\n${scope}`,
  what: "custom role",
  load: (db) => customRoleGrantsOf(db, orgId, name, scope),
  ownerOf: (grants) => (grants === undefined ? undefined : { orgId, credentialId: null })
})

export const customRoleGrants = (orgId: string, name: string, scope: "organization" | "workspace") => lookupFact(customRoleFact(orgId, name, scope))
