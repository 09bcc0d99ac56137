/**
 * The packs wing's SQL: what it reads of the organization's plugin listings (`plugin_listings`).
 */
import { Effect } from "effect"
import { Db, query } from "../../streams/Db.ts"

/** The names of the organization's capability packs with an enabled, non-deleted listing. */
export const enabledPackNames = (orgId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("installed packs", () => db.sql`
      select name from ${db.table("plugin_listings")}
      where org_id = ${orgId} and plugin_type = 'capability' and enabled and deleted_at is null`)
    return rows.map((row) => row.name as string)
  })
