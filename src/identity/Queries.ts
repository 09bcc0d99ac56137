/**
 * The identity wing's SQL: what machines recorded (`machines`, `machine_records`,
 * `telemetry_batches`, projected from the `machine` and `telemetry` actors) and the organization's
 * administration read models (`sso_providers`, `organizations`, `org_settings`, `workspaces`,
 * `org_members`, `workspace_members`, `users`).
 */
import { Effect } from "effect"
import { Db, query } from "../../streams/Db.ts"
import type { EnrolledMachine, MachineMemory, MachineRecord, SsoProvider, TelemetryBatch, WorkspaceMember, WorkspaceSettings } from "./Api.ts"

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

/** The first claim of a work order in the workspace, if any machine claimed it. */
export const firstWorkOrderClaim = (workspaceId: string, workOrderId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [held] = yield* query("find work order claim", () => db.sql`
      select record_id, machine_id, at from ${db.table("machine_records")}
      where workspace_id = ${workspaceId} and kind = 'work_order_claim' and subject = ${workOrderId}
      order by at, record_id limit 1`)
    return held === undefined ? undefined : { claimId: held.record_id as string, machineId: held.machine_id as string, claimedAt: isoStamp(held.at) }
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
