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
