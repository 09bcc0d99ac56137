/**
 * An organization's audit trail as JSON Lines, with what proves it (docs/audit.md, "Export"):
 * read from the log itself (no read model), the organization's events between two times with
 * their partition, offset and hashes, and per partition the chain's links (offset and hashes only,
 * never another organization's content) from its first exported event to the signed checkpoint
 * that covers its last one. `scripts/verify-audit-export.mjs` checks such an export with nothing
 * but Node and the public key.
 */
import { Effect, Stream } from "effect"
import { checkpointPayload, isCheckpoint } from "./Checkpoints.ts"
import { allPartitions, EventLog, type LoggedEvent, readUpTo } from "./EventLog.ts"

export interface ExportRequest {
  readonly orgId: string
  /** Inclusive, epoch milliseconds. */
  readonly from: number
  /** Exclusive, epoch milliseconds. */
  readonly to: number
}

export interface AuditExport {
  readonly lines: ReadonlyArray<string>
  readonly events: number
  readonly checkpoints: number
  /** The organization's events after their partition's last checkpoint: not yet covered. */
  readonly uncovered: number
}

/** Whether an event belongs to the organization's trail: its payload names the organization. */
const ofOrganization = (event: LoggedEvent, orgId: string): boolean => {
  const payload = event.payload as { orgId?: unknown; orgIds?: unknown } | null
  if (payload === null || typeof payload !== "object") return false
  return payload.orgId === orgId || (Array.isArray(payload.orgIds) && payload.orgIds.includes(orgId))
}

const recordOf = (e: LoggedEvent) => ({
  key: e.key,
  seq: e.seq,
  firstSeq: e.firstSeq,
  type: e.type,
  at: e.at,
  commandId: e.commandId,
  actor: e.actor,
  payload: e.payload
})

type Entry =
  | { readonly type: "link"; readonly partition: number; readonly offset: number; readonly prev: string | null; readonly hash: string | null }
  | { readonly type: "event" | "checkpoint"; readonly partition: number; readonly offset: number; readonly prev: string | null; readonly hash: string | null; readonly event: ReturnType<typeof recordOf> }

/** One partition's proof: everything from its first exported event on, cut after the covering checkpoint. */
class PartitionProof {
  readonly entries: Array<Entry> = []
  lastEvent = -1

  constructor(readonly partition: number) {}

  add(event: LoggedEvent, request: ExportRequest) {
    const at = Date.parse(event.at)
    const wanted = at >= request.from && at < request.to && ofOrganization(event, request.orgId)
    if (!wanted && this.entries.length === 0) return
    const place = { partition: this.partition, offset: event.offset, prev: event.prev, hash: event.hash }
    if (wanted) {
      this.entries.push({ type: "event", ...place, event: recordOf(event) })
      this.lastEvent = this.entries.length - 1
    } else if (isCheckpoint(event)) {
      this.entries.push({ type: "checkpoint", ...place, event: recordOf(event) })
    } else {
      this.entries.push({ type: "link", ...place })
    }
  }

  /** The entries up to the first checkpoint naming an offset at or past the last event; without one, up to the last event. */
  finish(): { readonly entries: ReadonlyArray<Entry>; readonly covered: boolean } {
    if (this.lastEvent < 0) return { entries: [], covered: true }
    const lastOffset = this.entries[this.lastEvent].offset
    for (let i = this.lastEvent + 1; i < this.entries.length; i++) {
      const entry = this.entries[i]
      if (entry.type !== "checkpoint") continue
      const claim = checkpointPayload(entry.event.payload)
      if (claim !== undefined && claim.offset >= lastOffset) return { entries: this.entries.slice(0, i + 1), covered: true }
    }
    return { entries: this.entries.slice(0, this.lastEvent + 1), covered: false }
  }
}

/** The export of the log as it stands now. */
export const exportAudit = (request: ExportRequest, keyId: string | null) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const partitions = allPartitions(log.partitions)
    const ends = yield* log.endOffsets(partitions)
    const proofs = new Map(partitions.map((p) => [p, new PartitionProof(p)]))
    yield* readUpTo(log, new Map(partitions.map((p) => [p, 0])), ends).pipe(
      Stream.runForEach((chunk) =>
        Effect.sync(() => {
          const proof = proofs.get(chunk.partition)!
          for (const event of chunk.events) proof.add(event, request)
        })
      )
    )
    const lines = [
      JSON.stringify({
        type: "audit-export",
        version: 1,
        orgId: request.orgId,
        from: new Date(request.from).toISOString(),
        to: new Date(request.to).toISOString(),
        keyId
      })
    ]
    let events = 0
    let checkpoints = 0
    let uncovered = 0
    for (const proof of proofs.values()) {
      const { entries, covered } = proof.finish()
      for (const entry of entries) {
        lines.push(JSON.stringify(entry))
        if (entry.type === "event") events++
        if (entry.type === "checkpoint") checkpoints++
      }
      if (!covered) uncovered += entries.filter((e) => e.type === "event").length - coveredEvents(entries)
    }
    return { lines, events, checkpoints, uncovered } satisfies AuditExport
  }).pipe(Effect.withSpan("AuditExport.exportAudit"))

/** Events at or before the offset named by the partition's last checkpoint among the entries. */
const coveredEvents = (entries: ReadonlyArray<Entry>): number => {
  let coveredThrough = -1
  for (const entry of entries) {
    if (entry.type !== "checkpoint") continue
    const claim = checkpointPayload(entry.event.payload)
    if (claim !== undefined) coveredThrough = Math.max(coveredThrough, claim.offset)
  }
  return entries.filter((e) => e.type === "event" && e.offset <= coveredThrough).length
}
