/**
 * The audit read model as the end-to-end suites compare it: one call of a capability leaves the same
 * record on every surface (REST, MCP, the agent's tools), but for what tells the calls apart.
 */
import { Effect } from "effect"
import { EventLog } from "../../streams/EventLog.ts"
import type { TestNode } from "./platform.ts"
import { caughtUp } from "./projection.ts"

/** The audit rows of one capability, oldest first, once the node's projections have caught up with its log. */
export const auditRows = async (node: TestNode, capabilityName: string) => {
  await Effect.runPromise(caughtUp(node.db).pipe(Effect.provideService(EventLog, node.log)))
  return node.db.sql`select * from ${node.db.table("audit_log")} where capability = ${capabilityName} order by at`
}

/** An audit row without what differs between calls of the same thing on two surfaces: its id, time, duration and surface. */
export const comparableAudit = ({ invocation_id, at, duration_ms, surface, ...rest }: Record<string, unknown>) => rest
