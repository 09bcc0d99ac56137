/**
 * The organization audit log (DESIGN "Audit records are events too"; spec 6.3): capability
 * invocations from every surface and security events, newest first, for an Owner.
 */
import { mustSee } from "../../streams/ReadFence.ts"
import { AuditLog } from "./AuditLog.ts"
import { Effect } from "effect"
import { type AnyCapability, implement } from "../checkpoint/Capability.ts"
import { keysetPage, TimeIdCursor, timeId } from "../platform/Paging.ts"
import * as Api from "./Api.ts"
import { auditEntriesAfter } from "./Queries.ts"

export const listAudit = implement(Api.listAudit, (invocation, input) =>
  Effect.gen(function* () {
    // this node's own audit records are part of what the list must show
    yield* mustSee((yield* AuditLog).appended())
    const filter = {
      ...input,
      since: input.since === undefined ? undefined : new Date(input.since.epochMillis),
      until: input.until === undefined ? undefined : new Date(input.until.epochMillis)
    }
    const read = (after: readonly [string, string] | undefined, rows: number) => auditEntriesAfter(invocation.orgId!, filter, after, rows)
    const { page, nextCursor } = yield* keysetPage(TimeIdCursor, input, read, (last) => timeId(last.at, last.id))
    return {
      entries: page.map((r) => ({ ...r, at: r.at.toISOString() })),
      nextCursor
    }
  })
)

export const auditCapabilities: ReadonlyArray<AnyCapability> = [listAudit]
