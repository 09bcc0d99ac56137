/**
 * Who is calling: a bearer credential (an API key, a CLI login, or a machine key, told apart by
 * the reserved scope key `purpose`) or a browser session cookie, resolved against the read
 * models; and what the caller may do in the place a path names (spec 5).
 */
import { Clock, Effect } from "effect"
import type postgres from "postgres"
import { AccessCache, type Owner, type Table } from "../checkpoint/AccessCache.ts"
import { parseBearer, parseSessionToken, verifySecret } from "./ApiKeyToken.ts"
import { Db, type DbError, type DbService } from "../../streams/Db.ts"
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

/** `load` through this node's access cache. */
const cachedLookup = <A>(table: Table, key: string, what: string, load: (db: DbService) => Promise<A>, ownerOf: (value: A) => Owner | undefined) =>
  Effect.flatMap(Db, (db) => Effect.flatMap(AccessCache, (cache) => cache.lookup(table, key, what, () => load(db), ownerOf)))

/** The key or session whose token has this lookup id, if any. */
const findCredential = (table: "keys" | "sessions", what: string, lookupId: string, load: (db: DbService) => Promise<CredentialRecord | undefined>) =>
  cachedLookup(table, lookupId, what, load, credentialOwner)

/** The decision made afresh on every use of a (possibly cached) credential. */
const admit = (record: CredentialRecord | undefined, raw: string, invalid: string, expired: string) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    // the same answer for an unknown, a wrong and a revoked credential: nothing to learn by probing
    if (record === undefined || !verifySecret(raw, record.secretHash) || record.void) return Effect.fail(unauthorized("invalid_credential", invalid))
    if (record.expiresAt !== null && record.expiresAt <= now) return Effect.fail(unauthorized("expired_credential", expired))
    return Effect.succeed(record.principal)
  })

export const authenticate = (credentials: Credentials): Effect.Effect<Principal, Unauthorized | DbError, Db | AccessCache> => {
  const token = credentials.authorization === undefined || credentials.authorization.trim() === ""
    ? sessionCookieOf(credentials.cookie)
    : undefined
  if (token !== undefined) return authenticateSession(token)
  const bearer = parseBearer(credentials.authorization)
  if (bearer._tag === "Missing") return Effect.fail(unauthorized("missing_credential", "Authorization: Bearer <API key> or a sign-in session is required"))
  if (bearer._tag === "Malformed") return Effect.fail(unauthorized("malformed_credential", "the bearer credential is not an API key"))
  return findCredential("keys", "find api key", bearer.lookupId, async (db) => {
    const key = await apiKeyByLookupId(db, bearer.lookupId)
    return key === undefined ? undefined : keyRecord(key)
  }).pipe(Effect.flatMap((record) => admit(record, bearer.raw, "the API key is not valid", "the API key has expired")))
}

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

const authenticateSession = (token: string) => {
  const parsed = parseSessionToken(token)
  if (parsed === undefined) return Effect.fail(unauthorized("malformed_credential", "the session cookie is not valid"))
  return findCredential("sessions", "find session", parsed.lookupId, async (db) => {
    const session = await sessionByLookupId(db, parsed.lookupId)
    return session === undefined ? undefined : sessionRecord(session)
  }).pipe(Effect.flatMap((record) => admit(record, parsed.raw, "the session is not valid; sign in again", "the session has expired; sign in again")))
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

/** The organization and workspace a path names, if both exist. */
export const findPlace = (orgSlug: string, workspaceSlug: string) =>
  cachedLookup("places", `${orgSlug}\n${workspaceSlug}`, "find workspace", (db) => placeBySlugs(db, orgSlug, workspaceSlug),
    (place) => (place === undefined ? undefined : { orgId: place.orgId, credentialId: null }))

/** Slugs of an organization and (optionally) one of its workspaces, for messages. */
export const slugsOf = (orgId: string, workspaceId: string | null) =>
  cachedLookup("slugs", `${orgId}\n${workspaceId ?? ""}`, "name workspace", async (db) => {
    const row = await placeSlugs(db, orgId, workspaceId)
    if (row === undefined) return undefined
    return workspaceId === null ? row.orgSlug : `${row.orgSlug}/${row.workspaceSlug ?? workspaceId}`
  }, (slugs) => (slugs === undefined ? undefined : { orgId, credentialId: null })).pipe(
    // an organization not (yet) in the read model is named by its id
    Effect.map((slugs) => slugs ?? (workspaceId === null ? orgId : `${orgId}/${workspaceId}`))
  )

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

/** The organization's security settings and plan, and, for a person, their standing there: one query. */
export const accessFacts = (orgId: string, workspaceId: string | null, userId: string | null, sessionProviderId: string | null) =>
  cachedLookup("facts", `${orgId}\n${workspaceId ?? ""}\n${userId ?? ""}\n${sessionProviderId ?? ""}`, "access facts", async (db) => {
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
  }, () => ({ orgId, credentialId: null }))

/** The built-in roles a custom role grants, if the organization defines it with that scope. */
export const customRoleGrants = (orgId: string, name: string, scope: "organization" | "workspace") =>
  cachedLookup("roles", `${orgId}\n${name}\n${scope}`, "custom role", (db) => customRoleGrantsOf(db, orgId, name, scope),
    (grants) => (grants === undefined ? undefined : { orgId, credentialId: null }))
