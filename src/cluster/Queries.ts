/**
 * The cluster wing's SQL: `cluster_nodes`, what each running node says of itself.
 */
import { Effect } from "effect"
import { Db, query } from "../../streams/Db.ts"

/** What a node says of itself. */
export interface NodeReport {
  readonly nodeId: string
  readonly version: string
  readonly draining: boolean
  readonly ready: ReadonlyArray<number>
}

/** What a node writes of itself: its report, and when its process started (its own clock, as the
 * runs it starts record theirs). */
export interface NodeReportWritten extends NodeReport {
  readonly startedAt: string
}

/** Writes the node's report, stamped with the database's clock (one clock for every node). */
export const reportNode = (report: NodeReportWritten) =>
  Effect.flatMap(Db, ({ sql, table }) =>
    query("reporting the node", () => sql`
      insert into ${table("cluster_nodes")} (node_id, version, draining, ready, started_at, seen_at)
      values (${report.nodeId}, ${report.version}, ${report.draining}, ${sql.array([...report.ready], 23)}, ${report.startedAt}, now())
      on conflict (node_id) do update
      set version = excluded.version, draining = excluded.draining, ready = excluded.ready, started_at = excluded.started_at, seen_at = now()`)
  )

export const forgetNode = (nodeId: string) =>
  Effect.flatMap(Db, ({ sql, table }) => query("removing the node's report", () => sql`delete from ${table("cluster_nodes")} where node_id = ${nodeId}`))

/** The reports refreshed within `freshMs`, by node id. */
export const freshReports = (freshMs: number) =>
  Effect.flatMap(Db, ({ sql, table }) =>
    Effect.map(
      query("reading the nodes' reports", () => sql<Array<{ node_id: string; version: string; draining: boolean; ready: Array<number> }>>`
        select node_id, version, draining, ready from ${table("cluster_nodes")}
        where seen_at > now() - make_interval(secs => ${freshMs / 1000})`),
      (rows) => new Map(rows.map((row): [string, NodeReport] => [row.node_id, { nodeId: row.node_id, version: row.version, draining: row.draining, ready: row.ready }]))
    )
  )
