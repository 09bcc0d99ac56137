/**
 * The organization audit log (DESIGN "Audit records are events too"; spec 6.3): capability
 * invocations from every surface and security events, newest first, for an Owner.
 */
import { mustSee } from "../../streams/ReadFence.ts"
import { AuditLog } from "./AuditLog.ts"
import { Effect, Schema } from "effect"
import { type AnyCapability, defineCapability } from "../checkpoint/Capability.ts"
import { Db, query } from "../../streams/Db.ts"
import { keysetPage, PageLimit, TimeIdCursor, timeId } from "../platform/Paging.ts"

const Entry = Schema.Struct({
  id: Schema.String,
  at: Schema.String,
  kind: Schema.Literal("capability", "security", "playbook"),
  /** The security event's type, e.g. `api_key.revoked`; null for an invocation. */
  event: Schema.NullOr(Schema.String),
  capability: Schema.NullOr(Schema.String),
  surface: Schema.NullOr(Schema.String),
  workspaceId: Schema.NullOr(Schema.String),
  principalKind: Schema.String,
  apiKeyId: Schema.NullOr(Schema.String),
  userId: Schema.NullOr(Schema.String),
  outcome: Schema.NullOr(Schema.String),
  errorTag: Schema.NullOr(Schema.String),
  durationMs: Schema.NullOr(Schema.Number),
  detail: Schema.NullOr(Schema.Unknown)
})

export const listAudit = defineCapability({
  name: "audit.list",
  description: "List the organization's audit log, newest first, filtered by kind, event, capability, surface, person, key, outcome or time.",
  scope: "organization",
  roles: ["org:owner"],
  surfaces: ["api", "mcp"],
  sensitivity: "high",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin",
  input: Schema.Struct({
    kind: Schema.optional(Schema.Literal("capability", "security", "playbook")),
    event: Schema.optional(Schema.String),
    capability: Schema.optional(Schema.String),
    surface: Schema.optional(Schema.Literal("api", "mcp", "agent", "a2a", "playbook")),
    userId: Schema.optional(Schema.String),
    apiKeyId: Schema.optional(Schema.String),
    outcome: Schema.optional(Schema.Literal("succeeded", "failed")),
    since: Schema.optional(Schema.DateTimeUtc),
    until: Schema.optional(Schema.DateTimeUtc),
    limit: Schema.optional(PageLimit),
    cursor: Schema.optional(Schema.String)
  }),
  output: Schema.Struct({ entries: Schema.Array(Entry), nextCursor: Schema.NullOr(Schema.String) }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const db = yield* Db
      // this node's own audit records are part of what the list must show
      yield* mustSee((yield* AuditLog).appended())
      const sql = db.sql
      const filter = (column: string, value: string | undefined) => (value === undefined ? sql`` : sql`and ${sql(column)} = ${value}`)
      const read = (after: readonly [string, string] | undefined, rows: number) => query("list audit", () => sql`
        select invocation_id, at, kind, event, capability, surface, workspace_id, principal_kind, api_key_id, user_id,
          outcome, error_tag, duration_ms, detail
        from ${db.table("audit_log")}
        where org_id = ${invocation.orgId}
          ${filter("kind", input.kind)} ${filter("event", input.event)} ${filter("capability", input.capability)}
          ${filter("surface", input.surface)} ${filter("user_id", input.userId)} ${filter("api_key_id", input.apiKeyId)}
          ${filter("outcome", input.outcome)}
          ${input.since === undefined ? sql`` : sql`and at >= ${new Date(input.since.epochMillis)}`}
          ${input.until === undefined ? sql`` : sql`and at < ${new Date(input.until.epochMillis)}`}
          ${after === undefined ? sql`` : sql`and (at, invocation_id) < (${new Date(after[0])}, ${after[1]})`}
        order by at desc, invocation_id desc limit ${rows}`)
      const { page, nextCursor } = yield* keysetPage(TimeIdCursor, input, read, (last) => timeId(last.at as Date, last.invocation_id as string))
      return {
        entries: page.map((r) => ({
          id: r.invocation_id,
          at: (r.at as Date).toISOString(),
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
        })),
        nextCursor
      }
    })
})

export const auditCapabilities: ReadonlyArray<AnyCapability> = [listAudit]
