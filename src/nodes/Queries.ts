/**
 * The nodes wing's SQL: its read models `schema_labels` and `nodes` (projected from the `schema`
 * and `node` actors).
 */
import { Effect } from "effect"
import { Db, query } from "../../streams/Db.ts"
import type { Node } from "./Api.ts"

const iso = (value: Date | string) => (value instanceof Date ? value.toISOString() : value)

/** The workspace's label definitions (or one label's), ordered by label. */
export const labelRows = (workspaceId: string, label: string | undefined) =>
  Effect.flatMap(Db, (db) =>
    query("read labels", () => db.sql`
      select label, properties, version, updated_at from ${db.table("schema_labels")}
      where workspace_id = ${workspaceId} ${label === undefined ? db.sql`` : db.sql`and label = ${label}`}
      order by label`)
  ).pipe(Effect.map((rows) => rows.map((r) => ({ label: r.label as string, properties: r.properties, version: r.version as number, updatedAt: iso(r.updated_at) }))))

const toNode = (row: Record<string, any>): Node => ({
  nodeId: row.node_id,
  label: row.label,
  properties: row.properties,
  version: row.version,
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at)
})

/** A node's row, if it lives in the workspace. */
export const readNode = (workspaceId: string, nodeId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("read node", () => db.sql`
      select node_id, label, properties, version, created_at, updated_at from ${db.table("nodes")}
      where workspace_id = ${workspaceId} and node_id = ${nodeId}`)
    return row === undefined ? undefined : toNode(row)
  })

/** Up to `rows` of the workspace's nodes (of one label, if given) after the id `after`, by id. */
export const nodesAfter = (workspaceId: string, label: string | undefined, after: string | undefined, rows: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const found = yield* query("list nodes", () => db.sql`
      select node_id, label, properties, version, created_at, updated_at from ${db.table("nodes")}
      where workspace_id = ${workspaceId}
        ${label === undefined ? db.sql`` : db.sql`and label = ${label}`}
        ${after === undefined ? db.sql`` : db.sql`and node_id > ${after}`}
      order by node_id limit ${rows}`)
    return found.map(toNode)
  })
