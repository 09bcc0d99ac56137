/**
 * The audit wing's SQL: its read model `audit_log` (projected from the audit records on the log).
 */
import { Effect } from "effect"
import { Db, query } from "../../streams/Db.ts"
import type { Entry } from "./Api.ts"

/** What an audit listing keeps: each named column equal to its value, `at` in [since, until). */
export interface AuditFilter {
  readonly kind?: string | undefined
  readonly event?: string | undefined
  readonly capability?: string | undefined
  readonly surface?: string | undefined
  readonly userId?: string | undefined
  readonly apiKeyId?: string | undefined
  readonly outcome?: string | undefined
  readonly since?: Date | undefined
  readonly until?: Date | undefined
}

/** An audit entry as its row holds it: its time a Date. */
export type AuditRow = Omit<Entry, "at"> & { readonly at: Date }

/** Up to `rows` of the organization's audit entries that pass the filter, after the position
 * `after` (time, invocation id), newest first. */
export const auditEntriesAfter = (orgId: string, filter: AuditFilter, after: readonly [string, string] | undefined, rows: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const sql = db.sql
    const equal = (column: string, value: string | undefined) => (value === undefined ? sql`` : sql`and ${sql(column)} = ${value}`)
    const found = yield* query("list audit", () => sql`
      select invocation_id, at, kind, event, capability, surface, workspace_id, principal_kind, api_key_id, user_id,
        outcome, error_tag, duration_ms, detail
      from ${db.table("audit_log")}
      where org_id = ${orgId}
        ${equal("kind", filter.kind)} ${equal("event", filter.event)} ${equal("capability", filter.capability)}
        ${equal("surface", filter.surface)} ${equal("user_id", filter.userId)} ${equal("api_key_id", filter.apiKeyId)}
        ${equal("outcome", filter.outcome)}
        ${filter.since === undefined ? sql`` : sql`and at >= ${filter.since}`}
        ${filter.until === undefined ? sql`` : sql`and at < ${filter.until}`}
        ${after === undefined ? sql`` : sql`and (at, invocation_id) < (${new Date(after[0])}, ${after[1]})`}
      order by at desc, invocation_id desc limit ${rows}`)
    return found.map((r): AuditRow => ({
      id: r.invocation_id,
      at: r.at as Date,
      kind: r.kind,
      event: r.event,
      capability: r.capability,
      surface: r.surface,
      workspaceId: r.workspace_id,
      principalKind: r.principal_kind,
      apiKeyId: r.api_key_id,
      userId: r.user_id,
      outcome: r.outcome,
      errorTag: r.error_tag,
      durationMs: r.duration_ms,
      detail: r.detail
    }))
  })

/** A person's data key as `person_keys` holds it (docs/audit.md, "Erasure by crypto-shredding"). */
export interface StoredPersonKey {
  readonly keyRef: string
  readonly kmsKeyId: string
  readonly wrappedKey: string
}

const storedKeyOf = (row: Record<string, any>): StoredPersonKey => ({ keyRef: row.key_ref, kmsKeyId: row.kms_key_id, wrappedKey: row.wrapped_key })

/** The person's data key; undefined before their first sealed value, and after their erasure. */
export const personKeyOf = (userId: string) =>
  Effect.flatMap(Db, (db) => query("person key", () => db.sql`
    select key_ref, kms_key_id, wrapped_key from ${db.table("person_keys")} where user_id = ${userId}`))
    .pipe(Effect.map((rows) => (rows.length === 0 ? undefined : storedKeyOf(rows[0]!))))

/** Keeps a new data key for the person, unless another node kept one first (that one stays). */
export const keepPersonKey = (userId: string, key: StoredPersonKey) =>
  Effect.flatMap(Db, (db) => query("make person key", () => db.sql`
    insert into ${db.table("person_keys")} (key_ref, user_id, kms_key_id, wrapped_key)
    values (${key.keyRef}, ${userId}, ${key.kmsKeyId}, ${key.wrappedKey}) on conflict (user_id) do nothing`))

/** The data keys these refs name that still exist. */
export const personKeysByRef = (refs: ReadonlyArray<string>) =>
  Effect.flatMap(Db, (db) => query("person keys", () => db.sql`
    select key_ref, kms_key_id, wrapped_key from ${db.table("person_keys")} where key_ref = any(${refs as string[]}::text[])`))
    .pipe(Effect.map((rows) => rows.map(storedKeyOf)))

/** Deletes the person's data keys; how many there were. */
export const deletePersonKeys = (userId: string) =>
  Effect.flatMap(Db, (db) => query("destroy person keys", () => db.sql`
    delete from ${db.table("person_keys")} where user_id = ${userId} returning key_ref`))
    .pipe(Effect.map((rows) => rows.length))
