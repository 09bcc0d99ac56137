/**
 * Who is calling: a bearer credential (an API key, a CLI login, or a machine key, told apart by
 * the reserved scope key `purpose`) or a browser session cookie, resolved against the read
 * models; and what the caller may do in the place a path names (spec 5).
 */
import { Clock, Effect } from "effect"
import { cachedAccessFactRows, cachedKeyRows, cachedPlaceRows, cachedSlugRows } from "./AccessCache.ts"
import { parseBearer, parseSessionToken, verifySecret } from "./ApiKeyToken.ts"
import { Db, query } from "./Db.ts"
import { Unauthorized } from "./Errors.ts"

/** Credential kinds of spec 5 rule 8, plus browser sessions (rule 7). */
export type CredentialKind = "session" | "cli_login" | "api_key" | "host_key" | "gateway_key" | "telemetry_key" | "unknown_purpose"

/** `purpose` scope values and the kinds they make (rule 9); no purpose is an ordinary key. */
export const PURPOSES = {
  cli_session_v1: "cli_login",
  svc_host_v1: "host_key",
  svc_gateway_v1: "gateway_key",
  svc_telemetry_v1: "telemetry_key"
} as const satisfies Record<string, CredentialKind>
export type Purpose = keyof typeof PURPOSES

export const isPurpose = (value: string): value is Purpose => Object.hasOwn(PURPOSES, value)

/** An authenticated caller. */
export interface Principal {
  readonly credential: CredentialKind
  /** The bearer credential's id (`aky_...`); null for a session. */
  readonly apiKeyId: string | null
  /** The session's id; null for bearer credentials. */
  readonly sessionId: string | null
  /** The credential's organization; null for a session, which acts wherever its person belongs. */
  readonly orgId: string | null
  /** The credential's workspace; null for an organization-level credential or a session. */
  readonly workspaceId: string | null
  /** The person acting: the signed-in user or the CLI login's approver; null for keys. */
  readonly userId: string | null
  /** Who the calls are attributed to: the person, or a key's creator. */
  readonly attributedTo: string
  /** For an enterprise key: the custom role it acts as. */
  readonly customRole: string | null
  /** For a host key: the enrolled machine. */
  readonly machineId: string | null
  /** The `purpose` scope value as presented (for an unknown purpose, what it said). */
  readonly purpose: string | null
  /** A session signed in through this SSO provider of this organization. */
  readonly sso: { readonly orgId: string; readonly providerId: string } | null
}

/** The `actor` of commands and events a principal causes. */
export const actorOf = (principal: Principal): string =>
  principal.userId !== null && principal.credential === "session" ? `user:${principal.userId}` : `key:${principal.apiKeyId}`

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

export const authenticate = (credentials: Credentials) =>
  Effect.gen(function* () {
    const token = credentials.authorization === undefined || credentials.authorization.trim() === ""
      ? sessionCookieOf(credentials.cookie)
      : undefined
    if (token !== undefined) return yield* authenticateSession(token)
    const bearer = parseBearer(credentials.authorization)
    if (bearer._tag === "Missing") return yield* unauthorized("missing_credential", "Authorization: Bearer <API key> or a sign-in session is required")
    if (bearer._tag === "Malformed") return yield* unauthorized("malformed_credential", "the bearer credential is not an API key")
    const db = yield* Db
    // AccessCache: the row may be a second old; the secret, status and expiry are checked below every time
    const [key] = yield* cachedKeyRows(db, bearer.lookupId, query("find api key", () => db.sql`
      select key_id, org_id, workspace_id, created_by, secret_hash, status, expires_at, purpose, custom_role, machine_id
      from ${db.table("api_keys")} where lookup_id = ${bearer.lookupId}`))
    // the same answer for an unknown, a wrong and a revoked key: nothing to learn by probing
    if (key === undefined || !verifySecret(bearer.raw, key.secret_hash) || key.status === "revoked") {
      return yield* unauthorized("invalid_credential", "the API key is not valid")
    }
    const now = yield* Clock.currentTimeMillis
    if (key.expires_at !== null && (key.expires_at as Date).getTime() <= now) {
      return yield* unauthorized("expired_credential", "the API key has expired")
    }
    const purpose: string | null = key.purpose
    const credential: CredentialKind = purpose === null ? "api_key" : isPurpose(purpose) ? PURPOSES[purpose] : "unknown_purpose"
    return {
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
    } satisfies Principal as Principal
  })

const authenticateSession = (token: string) =>
  Effect.gen(function* () {
    const parsed = parseSessionToken(token)
    if (parsed === undefined) return yield* unauthorized("malformed_credential", "the session cookie is not valid")
    const db = yield* Db
    const [session] = yield* query("find session", () => db.sql`
      select session_id, secret_hash, user_id, sso_org_id, sso_provider_id, expires_at, ended_at
      from ${db.table("sessions")} where lookup_id = ${parsed.lookupId}`)
    if (session === undefined || !verifySecret(parsed.raw, session.secret_hash) || session.ended_at !== null) {
      return yield* unauthorized("invalid_credential", "the session is not valid; sign in again")
    }
    if ((session.expires_at as Date).getTime() <= (yield* Clock.currentTimeMillis)) {
      return yield* unauthorized("expired_credential", "the session has expired; sign in again")
    }
    return {
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
    } satisfies Principal as Principal
  })

export interface Place {
  readonly orgId: string
  readonly orgSlug: string
  readonly workspaceId: string
  readonly workspaceSlug: string
}

/** The organization and workspace a path names, if both exist. */
export const findPlace = (orgSlug: string, workspaceSlug: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* cachedPlaceRows(db, orgSlug, workspaceSlug, query("find workspace", () => db.sql`
      select o.org_id, o.slug as org_slug, w.workspace_id, w.slug as workspace_slug
      from ${db.table("organizations")} o
      join ${db.table("workspaces")} w on w.org_id = o.org_id
      where o.slug = ${orgSlug} and w.slug = ${workspaceSlug}
      order by o.org_id limit 1`))
    return row === undefined
      ? undefined
      : ({ orgId: row.org_id, orgSlug: row.org_slug, workspaceId: row.workspace_id, workspaceSlug: row.workspace_slug } satisfies Place)
  })

/** Slugs of an organization and (optionally) one of its workspaces, for messages. */
export const slugsOf = (orgId: string, workspaceId: string | null) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* cachedSlugRows(db, orgId, workspaceId, query("name workspace", () => db.sql`
      select o.slug as org_slug, w.slug as workspace_slug
      from ${db.table("organizations")} o
      left join ${db.table("workspaces")} w on w.workspace_id = ${workspaceId} and w.org_id = o.org_id
      where o.org_id = ${orgId}`))
    const org = row?.org_slug ?? orgId
    return workspaceId === null ? org : `${org}/${row?.workspace_slug ?? workspaceId}`
  })

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
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* cachedAccessFactRows(db, orgId, workspaceId, userId, sessionProviderId, query("access facts", () => db.sql`
      select s.plan, s.require_sso, s.require_mfa, s.mfa_grace_ends_at,
        (select role from ${db.table("org_members")} where org_id = ${orgId} and user_id = ${userId}) as org_role,
        (select role from ${db.table("workspace_members")} where workspace_id = ${workspaceId} and user_id = ${userId}) as workspace_role,
        (select mfa_enabled_at is not null from ${db.table("user_credentials")} where user_id = ${userId}) as mfa,
        exists (select 1 from ${db.table("sso_identities")} i join ${db.table("sso_providers")} p using (provider_id)
          where i.user_id = ${userId} and i.org_id = ${orgId} and p.org_id = ${orgId} and p.status = 'verified') as sso_linked,
        exists (select 1 from ${db.table("sso_providers")}
          where provider_id = ${sessionProviderId} and org_id = ${orgId} and status = 'verified') as session_provider_verified
      from (select 1) one left join ${db.table("org_settings")} s on s.org_id = ${orgId}`))
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
  })

/** The built-in roles a custom role grants, if the organization defines it with that scope. */
export const customRoleGrants = (orgId: string, name: string, scope: "organization" | "workspace") =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("custom role", () => db.sql`
      select grants from ${db.table("custom_roles")} where org_id = ${orgId} and name = ${name} and scope = ${scope}`)
    return row === undefined ? undefined : (row.grants as ReadonlyArray<string>)
  })
