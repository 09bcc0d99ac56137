/**
 * A person's in-app notices in an organization (a `human_input` step waiting for them; the plugin
 * marketplace adds its kinds), newest first. Only a person reads them: they are addressed to one.
 */
import { Effect, Schema } from "effect"
import { Json } from "../../actors/kernel.ts"
import { Db, query } from "../../streams/Db.ts"
import { slugsOf } from "../Auth.ts"
import { type AnyCapability, defineCapability } from "../Capabilities.ts"
import { DEFAULT_PAGE_LIMIT, PageLimit } from "./Paging.ts"

const Notification = Schema.Struct({
  notificationId: Schema.String,
  kind: Schema.String,
  workspaceId: Schema.NullOr(Schema.String),
  title: Schema.String,
  body: Schema.String,
  /** What it is about, e.g. `{ automationId, runId, index }` for an automation waiting for input. */
  subject: Json,
  /** The app's route to what it is about (spec 2.9), e.g. `/{org}/{workspace}/automations/{id}/runs/{runId}`. */
  deepLink: Schema.NullOr(Schema.String),
  createdAt: Schema.NullOr(Schema.String),
  /** When what it asked for was done (answered, expired); null while open. */
  resolvedAt: Schema.NullOr(Schema.String)
})

const iso = (value: Date | null) => (value === null ? null : value.toISOString())

export const listNotifications = defineCapability({
  name: "notifications.list",
  description: "List your notices in this organization, newest first; open ones only unless `all` is true.",
  scope: "organization",
  roles: ["person"],
  requiresPerson: true,
  surfaces: ["api", "mcp"],
  sensitivity: "low",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin",
  input: Schema.Struct({ all: Schema.optional(Schema.Boolean), limit: Schema.optional(PageLimit) }),
  output: Schema.Struct({ notifications: Schema.Array(Notification) }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const db = yield* Db
      const rows = yield* query("list notifications", () => db.sql`
        select * from ${db.table("notifications")}
        where org_id = ${invocation.orgId} and user_id = ${invocation.principal.attributedTo}
          ${input.all === true ? db.sql`` : db.sql`and resolved_at is null`}
        order by created_at desc nulls last, notification_id limit ${input.limit ?? DEFAULT_PAGE_LIMIT}`)
      const deepLinkOf = (r: Record<string, any>) =>
        r.kind === "run" && r.workspace_id !== null
          ? Effect.map(slugsOf(r.org_id, r.workspace_id), (place) => `/${place}/automations/${r.subject.automationId}/runs/${r.subject.runId}`)
          : Effect.succeed(null)
      const links = yield* Effect.forEach(rows, deepLinkOf)
      return {
        notifications: rows.map((r, i) => ({
          notificationId: r.notification_id,
          kind: r.kind,
          workspaceId: r.workspace_id,
          title: r.title,
          body: r.body,
          subject: r.subject,
          deepLink: links[i],
          createdAt: iso(r.created_at),
          resolvedAt: iso(r.resolved_at)
        }))
      }
    })
})

export const notificationCapabilities: ReadonlyArray<AnyCapability> = [listNotifications]
