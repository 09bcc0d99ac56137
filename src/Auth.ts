/**
 * Who is calling, and over what: bearer API keys resolved against the `api_keys` read model, and
 * the organization and workspace a path names.
 */
import { Clock, Effect } from "effect"
import { parseBearer, verifySecret } from "./ApiKeyToken.ts"
import { Db } from "./Db.ts"
import { Unauthorized } from "./Errors.ts"
import { query } from "./Db.ts"

/** An authenticated caller. */
export interface Principal {
  /** The credential kind; later issues add sessions, CLI logins and machine purposes. */
  readonly credential: "api_key"
  readonly apiKeyId: string
  readonly orgId: string
  /** The key's workspace; null for an organization key. */
  readonly workspaceId: string | null
  /** The person behind a CLI login; null for an ordinary key. */
  readonly userId: string | null
  /** Who the calls are attributed to: for a key, its creator. */
  readonly attributedTo: string
}

const unauthorized = (reason: Unauthorized["reason"], message: string) => new Unauthorized({ reason, message })

export const authenticate = (authorization: string | undefined) =>
  Effect.gen(function* () {
    const bearer = parseBearer(authorization)
    if (bearer._tag === "Missing") return yield* unauthorized("missing_credential", "Authorization: Bearer <API key> is required")
    if (bearer._tag === "Malformed") return yield* unauthorized("malformed_credential", "the bearer credential is not an API key")
    const db = yield* Db
    const [key] = yield* query("find api key", () => db.sql`
      select key_id, org_id, workspace_id, created_by, secret_hash, status, expires_at
      from ${db.table("api_keys")} where lookup_id = ${bearer.lookupId}`)
    // the same answer for an unknown, a wrong and a revoked key: nothing to learn by probing
    if (key === undefined || !verifySecret(bearer.raw, key.secret_hash) || key.status !== "active") {
      return yield* unauthorized("invalid_credential", "the API key is not valid")
    }
    const now = yield* Clock.currentTimeMillis
    if (key.expires_at !== null && (key.expires_at as Date).getTime() <= now) {
      return yield* unauthorized("expired_credential", "the API key has expired")
    }
    return {
      credential: "api_key",
      apiKeyId: key.key_id,
      orgId: key.org_id,
      workspaceId: key.workspace_id,
      userId: null,
      attributedTo: key.created_by
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
    const [row] = yield* query("find workspace", () => db.sql`
      select o.org_id, o.slug as org_slug, w.workspace_id, w.slug as workspace_slug
      from ${db.table("organizations")} o
      join ${db.table("workspaces")} w on w.org_id = o.org_id
      where o.slug = ${orgSlug} and w.slug = ${workspaceSlug}
      order by o.org_id limit 1`)
    return row === undefined
      ? undefined
      : ({ orgId: row.org_id, orgSlug: row.org_slug, workspaceId: row.workspace_id, workspaceSlug: row.workspace_slug } satisfies Place)
  })

/** Slugs of an organization and (optionally) one of its workspaces, for messages. */
export const slugsOf = (orgId: string, workspaceId: string | null) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("name workspace", () => db.sql`
      select o.slug as org_slug, w.slug as workspace_slug
      from ${db.table("organizations")} o
      left join ${db.table("workspaces")} w on w.workspace_id = ${workspaceId} and w.org_id = o.org_id
      where o.org_id = ${orgId}`)
    const org = row?.org_slug ?? orgId
    return workspaceId === null ? org : `${org}/${row?.workspace_slug ?? workspaceId}`
  })
