/**
 * The identity wing's SQL: its read models (keys, sessions, users, organizations and their
 * members, device logins, SSO identities, guards' states), what machines recorded (`machines`,
 * `machine_records`, `telemetry_batches`) and the organization's administration read models
 * (`sso_providers`, `org_settings`, `workspaces`, `workspace_members`).
 */
import { Effect } from "effect"
import type postgres from "postgres"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { Db, type DbService, query } from "../../streams/Db.ts"
import type { PolicyRule } from "../../actors/fleet/events.ts"
import type { EnrolledMachine, MachineCommandEntry, MachineMemory, MachineRecord, RegisteredRepository, SsoProvider, TelemetryBatch, WorkOrder, WorkspaceMember, WorkspaceSettings } from "./Api.ts"

/** An organization and one of its workspaces, as a path names them. */
export interface Place {
  readonly orgId: string
  readonly orgSlug: string
  readonly workspaceId: string
  readonly workspaceSlug: string
}

// Keys, account, device logins, identity

// The access cache's loaders (Auth.ts): the cache runs them through `query` itself, so they are
// plain promises on the node's `Db`.

/** The bearer credential (API key, CLI login or machine key) whose token has this lookup id. */
export const apiKeyByLookupId = async (db: DbService, lookupId: string): Promise<postgres.Row | undefined> => {
  const [key] = await db.sql`
      select key_id, org_id, workspace_id, created_by, secret_hash, status, expires_at, purpose, custom_role, machine_id
      from ${db.table("api_keys")} where lookup_id = ${lookupId}`
  return key
}

/** The browser session whose cookie has this lookup id. */
export const sessionByLookupId = async (db: DbService, lookupId: string): Promise<postgres.Row | undefined> => {
  const [session] = await db.sql`
      select session_id, secret_hash, user_id, sso_org_id, sso_provider_id, expires_at, ended_at
      from ${db.table("sessions")} where lookup_id = ${lookupId}`
  return session
}

/** The organization and workspace these slugs name (the lowest organization id first), if both exist. */
export const placeBySlugs = async (db: DbService, orgSlug: string, workspaceSlug: string): Promise<Place | undefined> => {
  const [row] = await db.sql`
      select o.org_id, o.slug as org_slug, w.workspace_id, w.slug as workspace_slug
      from ${db.table("organizations")} o
      join ${db.table("workspaces")} w on w.org_id = o.org_id
      where o.slug = ${orgSlug} and w.slug = ${workspaceSlug}
      order by o.org_id limit 1`
  return row === undefined ? undefined : { orgId: row.org_id, orgSlug: row.org_slug, workspaceId: row.workspace_id, workspaceSlug: row.workspace_slug }
}

/** The slug of an organization and of one of its workspaces (null when the workspace is not found), if the organization exists. */
export const placeSlugs = async (db: DbService, orgId: string, workspaceId: string | null): Promise<{ readonly orgSlug: string; readonly workspaceSlug: string | null } | undefined> => {
  const [row] = await db.sql`
      select o.slug as org_slug, w.slug as workspace_slug
      from ${db.table("organizations")} o
      left join ${db.table("workspaces")} w on w.workspace_id = ${workspaceId} and w.org_id = o.org_id
      where o.org_id = ${orgId}`
  return row === undefined ? undefined : { orgSlug: row.org_slug, workspaceSlug: row.workspace_slug }
}

/** The organization's security settings and plan (absent without settings), and a person's roles,
 * two-factor and SSO standing there: one row. */
export const accessFactsRow = async (db: DbService, orgId: string, workspaceId: string | null, userId: string | null, sessionProviderId: string | null): Promise<postgres.Row | undefined> => {
  const [row] = await db.sql`
      select s.plan, s.require_sso, s.require_mfa, s.mfa_grace_ends_at,
        (select role from ${db.table("org_members")} where org_id = ${orgId} and user_id = ${userId}) as org_role,
        (select role from ${db.table("workspace_members")} where workspace_id = ${workspaceId} and user_id = ${userId}) as workspace_role,
        (select mfa_enabled_at is not null from ${db.table("user_credentials")} where user_id = ${userId}) as mfa,
        exists (select 1 from ${db.table("sso_identities")} i join ${db.table("sso_providers")} p using (provider_id)
          where i.user_id = ${userId} and i.org_id = ${orgId} and p.org_id = ${orgId} and p.status = 'verified') as sso_linked,
        exists (select 1 from ${db.table("sso_providers")}
          where provider_id = ${sessionProviderId} and org_id = ${orgId} and status = 'verified') as session_provider_verified
      from (select 1) one left join ${db.table("org_settings")} s on s.org_id = ${orgId}`
  return row
}

/** The built-in roles an organization's custom role of this scope grants, if it defines one. */
export const customRoleGrantsOf = async (db: DbService, orgId: string, name: string, scope: "organization" | "workspace"): Promise<ReadonlyArray<string> | undefined> => {
  const [row] = await db.sql`
      select grants from ${db.table("custom_roles")} where org_id = ${orgId} and name = ${name} and scope = ${scope}`
  return row === undefined ? undefined : (row.grants as ReadonlyArray<string>)
}

/** An ordinary API key's row (never the hash or the lookup id). */
export interface ApiKeyRow {
  readonly key_id: string
  readonly org_id: string
  readonly workspace_id: string | null
  readonly name: string
  readonly scopes: Record<string, string>
  readonly purpose: string | null
  readonly custom_role: string | null
  readonly status: string
  readonly expires_at: Date | null
  readonly created_by: string
  readonly created_at: Date
  readonly supersedes: string | null
  readonly superseded_by: string | null
}

/** An ordinary key (no `purpose`: not a machine or CLI credential) of the organization. */
export const ordinaryApiKey = (orgId: string | null, keyId: string) =>
  Effect.flatMap(Db, (db) =>
    query("find api key", () => db.sql<ApiKeyRow[]>`
      select key_id, org_id, workspace_id, name, scopes, purpose, custom_role, status, expires_at, created_by, created_at, supersedes, superseded_by
      from ${db.table("api_keys")} where key_id = ${keyId} and org_id = ${orgId} and purpose is null`)
  ).pipe(Effect.map(([key]) => key as ApiKeyRow | undefined))

/**
 * The organization's ordinary keys of the workspace, and with `withOrgKeys` its organization keys
 * too, oldest first: what a key manager sees (`api_key.list`), or of it the one key `keyId` (`api_key.get`).
 */
export const ordinaryApiKeys = (orgId: string | null, workspaceId: string | null, withOrgKeys: boolean, keyId?: string) =>
  Effect.flatMap(Db, (db) =>
    query("list api keys", () => db.sql<ApiKeyRow[]>`
        select key_id, org_id, workspace_id, name, scopes, purpose, custom_role, status, expires_at, created_by, created_at, supersedes, superseded_by
        from ${db.table("api_keys")}
        where org_id = ${orgId} and purpose is null
          and (workspace_id = ${workspaceId} ${withOrgKeys ? db.sql`or workspace_id is null` : db.sql``})
          ${keyId === undefined ? db.sql`` : db.sql`and key_id = ${keyId}`}
        order by created_at, key_id`)
  )

/** Up to `limit` actor states of rotated keys that recorded a successor which has no row of its own. */
export const rotatedKeysWithoutSuccessor = (limit: number) =>
  Effect.flatMap(Db, (db) =>
    query("rotations without their successor", () => db.sql<Array<{ state: unknown }>>`
    select s.state from ${db.table("api_keys")} o
    join ${db.table("actor_state")} s on s.key = ${`${ApiKeyActor.kind}:`} || o.key_id
    where o.superseded_by is not null
      and jsonb_typeof(s.state -> 'successor') = 'object'
      and not exists (select 1 from ${db.table("api_keys")} n where n.key_id = o.superseded_by)
    limit ${limit}`)
  ).pipe(Effect.map((rows) => rows.map((row) => row.state)))

/** The sealed TOTP secret a person's two-factor enrolment is waiting to confirm, if any. */
export const pendingTotpSealed = (userId: string) =>
  Effect.flatMap(Db, (db) =>
    query("pending totp", () => db.sql`
        select totp_pending_sealed from ${db.table("user_credentials")} where user_id = ${userId}`)
  ).pipe(Effect.map(([row]): string | null => row?.totp_pending_sealed ?? null))

/** A person's account: email, name, and whether two-factor is on. */
export const accountOf = (userId: string) =>
  Effect.flatMap(Db, (db) =>
    query("account", () => db.sql`
        select u.user_id, u.email, u.name, coalesce(c.mfa_enabled_at is not null, false) as mfa
        from ${db.table("users")} u left join ${db.table("user_credentials")} c using (user_id)
        where u.user_id = ${userId}`)
  ).pipe(Effect.map(([user]) => (user === undefined ? undefined : { userId: user.user_id as string, email: user.email as string, name: user.name as string, mfaEnabled: user.mfa as boolean })))

/** A person's organizations (only `onlyOrg`, if given) with their role, one row per workspace they
 * may enter (every one for an Owner; a row with a null workspace when none), by slug. */
export const accountMembershipRows = (userId: string, onlyOrg: string | null) =>
  Effect.flatMap(Db, (db) =>
    query("account memberships", () => db.sql`
        select o.org_id, o.slug, o.name, m.role, w.workspace_id, w.slug as workspace_slug, w.name as workspace_name, w.role as workspace_role
        from ${db.table("org_members")} m join ${db.table("organizations")} o using (org_id)
        left join lateral (
          select w.workspace_id, w.slug, w.name, wm.role from ${db.table("workspaces")} w
          left join ${db.table("workspace_members")} wm on wm.workspace_id = w.workspace_id and wm.user_id = m.user_id
          where w.org_id = m.org_id and (m.role = 'owner' or wm.role is not null)
        ) w on true
        where m.user_id = ${userId} ${onlyOrg === null ? db.sql`` : db.sql`and m.org_id = ${onlyOrg}`}
        order by o.slug, o.org_id, w.slug`)
  )

/** The ids of a person's organizations, in order. */
export const memberOrgIds = (userId: string) =>
  Effect.flatMap(Db, (db) =>
    query("memberships", () => db.sql`select org_id from ${db.table("org_members")} where user_id = ${userId} order by org_id`)
  ).pipe(Effect.map((rows) => rows.map((m) => m.org_id as string)))

/** The (earliest) account with this email and its password, TOTP secret and two-factor state. */
export const signInCredentialsByEmail = (email: string) =>
  Effect.flatMap(Db, (db) =>
    query("find user", () => db.sql`
      select u.user_id, c.password_hash, c.totp_secret_sealed, c.mfa_enabled_at
      from ${db.table("users")} u left join ${db.table("user_credentials")} c using (user_id)
      where u.email = ${email} order by u.created_at limit 1`)
  ).pipe(Effect.map(([user]) => user))

/** The lock ends (`lockedUntil`) recorded in these guards' states, past ones included. */
export const guardLockEnds = (keys: ReadonlyArray<string>) =>
  Effect.flatMap(Db, (db) =>
    query("guard locks", () => db.sql`
      select state->>'lockedUntil' as locked_until from ${db.table("actor_state")}
      where key = any(${keys}::text[]) and state->>'lockedUntil' is not null`)
  ).pipe(Effect.map((rows) => rows.map((row) => row.locked_until as string)))

/** Whether a device login that is live at `nowIso` shows this user code. */
export const userCodeTaken = (userCode: string, nowIso: string) =>
  Effect.flatMap(Db, (db) =>
    query("find user code", () => db.sql`
        select 1 from ${db.table("device_authorizations")} where user_code = ${userCode} and expires_at > ${nowIso} limit 1`)
  ).pipe(Effect.map(([taken]) => taken !== undefined))

/** The device login whose device code has this lookup id. */
export const deviceByLookupId = (lookupId: string) =>
  Effect.flatMap(Db, (db) =>
    query("find device", () => db.sql`
      select device_id, device_secret_hash, status, client_name, org_id, workspace_id, user_id, expires_at
      from ${db.table("device_authorizations")} where device_lookup = ${lookupId}`)
  ).pipe(Effect.map(([device]) => device))

/** The two latest device logins showing this user code. */
export const devicesByUserCode = (userCode: string) =>
  Effect.flatMap(Db, (db) =>
    query("find device by user code", () => db.sql`
      select device_id, client_name, expires_at from ${db.table("device_authorizations")}
      where user_code = ${userCode} order by expires_at desc, device_id limit 2`)
  )

/** The workspace an enrolled machine acts in, if the machine is enrolled. */
export const enrolledMachine = (machineId: string) =>
  Effect.flatMap(Db, (db) =>
    query("find machine", () => db.sql`
      select workspace_id from ${db.table("machines")} where machine_id = ${machineId}`)
  ).pipe(Effect.map(([enrolled]) => (enrolled === undefined ? undefined : { workspaceId: enrolled.workspace_id as string | null })))

/** Whether a host key for this machine was issued in another workspace than `workspaceId`. */
export const hostKeyElsewhere = (machineId: string, workspaceId: string) =>
  Effect.flatMap(Db, (db) =>
    query("find host keys of machine", () => db.sql`
      select 1 from ${db.table("api_keys")}
      where machine_id = ${machineId} and purpose = 'svc_host_v1' and workspace_id is distinct from ${workspaceId} limit 1`)
  ).pipe(Effect.map(([keyed]) => keyed !== undefined))

/** The organization a slug names (slugs are not unique in the read model: the lowest id first). */
export const orgIdBySlug = (orgSlug: string) =>
  Effect.flatMap(Db, (db) =>
    query("find organization", () => db.sql`
      select org_id from ${db.table("organizations")} where slug = ${orgSlug} order by org_id limit 1`)
  ).pipe(Effect.map(([org]) => (org === undefined ? undefined : (org.org_id as string))))

/** The verified SSO providers of the organization a slug names, oldest first. */
export const verifiedSsoProvidersBySlug = (orgSlug: string) =>
  Effect.flatMap(Db, (db) =>
    query("verified sso providers", () => db.sql`
      select provider_id, name from ${db.table("sso_providers")}
      where status = 'verified'
        and org_id = (select org_id from ${db.table("organizations")} where slug = ${orgSlug} order by org_id limit 1)
      order by created_at, provider_id`)
  ).pipe(Effect.map((rows) => rows.map((row) => ({ id: row.provider_id as string, name: row.name as string }))))

/** The person linked to this provider's subject, and their role in the organization (null: not a member). */
export const ssoLinkedPerson = (orgId: string, providerId: string, subject: string) =>
  Effect.flatMap(Db, (db) =>
    query("sso identity", () => db.sql`
      select i.user_id, m.role from ${db.table("sso_identities")} i
      left join ${db.table("org_members")} m on m.org_id = ${orgId} and m.user_id = i.user_id
      where i.provider_id = ${providerId} and i.subject = ${subject}`)
  ).pipe(Effect.map(([linked]) => (linked === undefined ? undefined : { userId: linked.user_id as string, role: linked.role as string | null })))

/** The (earliest) member of the organization with this email. */
export const memberByEmail = (orgId: string, email: string) =>
  Effect.flatMap(Db, (db) =>
    query("member by email", () => db.sql`
      select u.user_id from ${db.table("users")} u
      join ${db.table("org_members")} m on m.user_id = u.user_id and m.org_id = ${orgId}
      where u.email = ${email} order by u.created_at, u.user_id limit 1`)
  ).pipe(Effect.map(([member]) => (member === undefined ? undefined : (member.user_id as string))))

/** A timestamp column as ISO 8601 text (null stays null). */
function isoStamp(value: Date | string): string
function isoStamp(value: Date | string | null): string | null
function isoStamp(value: Date | string | null): string | null {
  return value instanceof Date ? value.toISOString() : value
}

// ---------------------------------------------------------------------------------------------
// Machine credentials

/** `%`, `_` and `\` match themselves in a LIKE pattern. */
const likeEscaped = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`)

/** Up to `limit` of the machine's memories whose text contains `text` (case-insensitive), newest first. */
export const machineMemoriesMatching = (machineId: string, workspaceId: string, text: string, limit: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("recall memories", () => db.sql`
      select record_id, body, detail, at from ${db.table("machine_records")}
      where machine_id = ${machineId} and workspace_id = ${workspaceId} and kind = 'memory'
        and body ilike ${`%${likeEscaped(text)}%`}
      order by at desc, record_id desc limit ${limit}`)
    return rows.map((r): MachineMemory => ({ memoryId: r.record_id, text: r.body, tags: r.detail.tags ?? [], uploadedAt: isoStamp(r.at) }))
  })

/** Up to `limit` of the workspace's work orders, newest first. */
export const workspaceWorkOrders = (workspaceId: string, limit: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("list work orders", () => db.sql`
      select work_order_id, title, detail, created_at, claimed_by, claimed_at from ${db.table("work_orders")}
      where workspace_id = ${workspaceId} order by created_at desc, work_order_id desc limit ${limit}`)
    return rows.map((r): WorkOrder => ({
      workOrderId: r.work_order_id,
      title: r.title,
      detail: r.detail,
      createdAt: isoStamp(r.created_at as Date),
      claimedBy: r.claimed_by,
      claimedAt: isoStamp(r.claimed_at)
    }))
  })

/** The machines enrolled in the workspace, by id. */
export const workspaceMachines = (workspaceId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("list machines", () => db.sql`
      select * from ${db.table("machines")} where workspace_id = ${workspaceId} order by machine_id`)
    return rows.map((r): EnrolledMachine => ({
      machineId: r.machine_id,
      keyId: r.key_id,
      enrolledAt: isoStamp(r.enrolled_at),
      lastSeenAt: isoStamp(r.last_seen_at),
      eventsIngested: r.events_ingested,
      memories: r.memories,
      workOrdersClaimed: r.work_orders_claimed,
      codegraphBuilds: r.codegraph_builds,
      certificateRenewals: r.certificate_renewals
    }))
  })

/** Up to `limit` of what the workspace's machines recorded (of one machine, of one kind, if given), newest first. */
export const workspaceMachineRecords = (workspaceId: string, machineId: string | undefined, kind: string | undefined, limit: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("list machine records", () => db.sql`
      select record_id, machine_id, kind, subject, body, detail, at from ${db.table("machine_records")}
      where workspace_id = ${workspaceId}
        ${machineId === undefined ? db.sql`` : db.sql`and machine_id = ${machineId}`}
        ${kind === undefined ? db.sql`` : db.sql`and kind = ${kind}`}
      order by at desc, record_id desc limit ${limit}`)
    return rows.map((r): MachineRecord => ({
      recordId: r.record_id,
      machineId: r.machine_id,
      kind: r.kind,
      subject: r.subject,
      body: r.body,
      detail: r.detail,
      at: isoStamp(r.at)
    }))
  })

/** The workspace's current policy bundle: version 0 with no rules while none was set. */
export const workspacePolicy = (workspaceId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("find machine policy", () => db.sql`
      select version, rules from ${db.table("machine_policies")} where workspace_id = ${workspaceId}`)
    return row === undefined ? { version: 0, rules: [] as ReadonlyArray<PolicyRule> } : { version: row.version as number, rules: row.rules as ReadonlyArray<PolicyRule> }
  })

/** Up to `limit` of the commands queued for the workspace's machines (for one machine; only those
 * not acknowledged, if asked), with their acknowledgements, newest first (oldest first when pending). */
export const machineCommands = (workspaceId: string, filter: { readonly machineId?: string | undefined; readonly pendingOnly: boolean }, limit: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("list machine commands", () => db.sql`
      select c.command_id, c.machine_id, c.name, c.arguments, c.enqueued_by, c.enqueued_at, a.acknowledged_at, a.outcome, a.detail
      from ${db.table("machine_commands")} c left join ${db.table("machine_command_acks")} a using (command_id)
      where c.workspace_id = ${workspaceId}
        ${filter.machineId === undefined ? db.sql`` : db.sql`and c.machine_id = ${filter.machineId}`}
        ${filter.pendingOnly ? db.sql`and a.command_id is null order by c.enqueued_at, c.command_id` : db.sql`order by c.enqueued_at desc, c.command_id desc`}
      limit ${limit}`)
    return rows.map((r): MachineCommandEntry => ({
      commandId: r.command_id,
      machineId: r.machine_id,
      name: r.name,
      arguments: r.arguments,
      enqueuedBy: r.enqueued_by,
      enqueuedAt: isoStamp(r.enqueued_at as Date),
      acknowledgedAt: isoStamp(r.acknowledged_at),
      outcome: r.outcome,
      detail: r.detail
    }))
  })

/** The repositories registered to the workspace, by name. */
export const workspaceRepositories = (workspaceId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("list workspace repositories", () => db.sql`
      select repository, registered_by, registered_at from ${db.table("workspace_repositories")}
      where workspace_id = ${workspaceId} order by repository`)
    return rows.map((r): RegisteredRepository => ({ repository: r.repository, registeredBy: r.registered_by, registeredAt: isoStamp(r.registered_at as Date) }))
  })

/** Up to `limit` of the telemetry batches sent for the workspace, newest first. */
export const workspaceTelemetryBatches = (orgId: string, workspaceId: string, limit: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("list telemetry", () => db.sql`
      select batch_id, key_id, points, at from ${db.table("telemetry_batches")}
      where org_id = ${orgId} and workspace_id = ${workspaceId}
      order by at desc, batch_id desc limit ${limit}`)
    return rows.map((r): TelemetryBatch => ({ batchId: r.batch_id, keyId: r.key_id, points: r.points, at: isoStamp(r.at) }))
  })

// ---------------------------------------------------------------------------------------------
// Organization administration

const toSsoProvider = (row: Record<string, any>): SsoProvider => ({
  providerId: row.provider_id,
  name: row.name,
  issuer: row.issuer,
  clientId: row.client_id,
  status: row.status === "verified" ? "verified" : "registered",
  createdAt: isoStamp(row.created_at),
  verifiedAt: isoStamp(row.verified_at)
})

/** The organization's SSO providers, without their secrets, oldest first. */
export const orgSsoProviders = (orgId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("sso providers", () => db.sql`
      select provider_id, name, issuer, client_id, status, created_at, verified_at
      from ${db.table("sso_providers")} where org_id = ${orgId} order by created_at, provider_id`)
    return rows.map(toSsoProvider)
  })

/** One SSO provider of the organization with its sealed secret, as the read model holds it. */
export const orgSsoProviderSealed = (orgId: string, providerId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("sso provider", () => db.sql`
      select provider_id, org_id, name, issuer, client_id, client_secret_sealed, status, created_at, verified_at
      from ${db.table("sso_providers")} where org_id = ${orgId} and provider_id = ${providerId}`)
    return row === undefined ? undefined : { ...toSsoProvider(row), orgId: row.org_id as string, clientSecretSealed: row.client_secret_sealed as string }
  })

/** The organization's slug, name, plan and security settings (settings columns null when it has no settings row). */
export const orgSettingsRow = (orgId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("org settings", () => db.sql`
      select o.org_id, o.slug, o.name, s.plan, s.require_sso, s.require_mfa, s.mfa_grace_ends_at
      from ${db.table("organizations")} o left join ${db.table("org_settings")} s using (org_id)
      where o.org_id = ${orgId}`)
    return row === undefined
      ? undefined
      : {
          slug: row.slug as string,
          name: row.name as string,
          plan: row.plan as string | null,
          requireSso: row.require_sso as boolean | null,
          requireMfa: row.require_mfa as boolean | null,
          mfaGraceEndsAt: isoStamp((row.mfa_grace_ends_at ?? null) as Date | string | null)
        }
  })

/** A workspace's id, slug, name and creation time. */
export const workspaceSettingsRow = (workspaceId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("workspace settings", () => db.sql`
      select workspace_id, slug, name, created_at from ${db.table("workspaces")} where workspace_id = ${workspaceId}`)
    if (row === undefined) return undefined
    const settings: WorkspaceSettings = { workspaceId: row.workspace_id, slug: row.slug, name: row.name, createdAt: isoStamp(row.created_at) }
    return settings
  })

/** The people who can enter the workspace (its members and the organization's Owners), by name. */
export const workspaceMemberRows = (orgId: string, workspaceId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("workspace members", () => db.sql`
      select u.user_id, u.name, u.email, wm.role as workspace_role, om.role as org_role
      from ${db.table("org_members")} om
      join ${db.table("users")} u on u.user_id = om.user_id
      left join ${db.table("workspace_members")} wm on wm.workspace_id = ${workspaceId} and wm.user_id = om.user_id
      where om.org_id = ${orgId} and (om.role = 'owner' or wm.role is not null)
      order by lower(u.name), u.name, u.email, u.user_id`)
    return rows.map((row): WorkspaceMember => ({ userId: row.user_id, name: row.name, email: row.email, workspaceRole: row.workspace_role, orgRole: row.org_role }))
  })
