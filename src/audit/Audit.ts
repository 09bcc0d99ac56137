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
import { type PersonalOpener, personalOpener, sealedWithin } from "./PersonalData.ts"

/** An automation step's failure, as a playbook entry's detail quotes it: its message holds sealed words (docs/audit.md). */
const failureMessageOf = (detail: unknown): string | undefined => {
  const error = typeof detail === "object" && detail !== null ? (detail as { readonly error?: unknown }).error : undefined
  const message = typeof error === "object" && error !== null ? (error as { readonly message?: unknown }).message : undefined
  return typeof message === "string" ? message : undefined
}

/** The detail with its failure's message opened; the sealed words of an erased person left out. */
const openedDetail = (open: PersonalOpener, detail: unknown): unknown => {
  const message = failureMessageOf(detail)
  if (message === undefined) return detail
  const { error, ...rest } = detail as { readonly error: object }
  return { ...rest, error: { ...error, message: open.within(message) } }
}

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
    const open = yield* personalOpener(page.flatMap((r) => sealedWithin(failureMessageOf(r.detail) ?? "")))
    return {
      entries: page.map((r) => ({ ...r, at: r.at.toISOString(), detail: openedDetail(open, r.detail) })),
      nextCursor
    }
  })
)

export const auditCapabilities: ReadonlyArray<AnyCapability> = [listAudit]
