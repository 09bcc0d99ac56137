/**
 * The node's audit writer. Every invocation's audit record (also its metering record) and every
 * failed sign-in is an event appended straight to the log: its key is its own (`audit:<id>`, seq 1),
 * so this node is its only writer and nothing is contended.
 *
 * Records go in batches (`GroupCommit.ts`): the first record of a batch waits `windowMs` for
 * company, and records that arrive while an append is in flight go in the next one, so one append,
 * one commit and one projection batch serve many invocations. Each caller still waits until the
 * append holding its record is durable; the append's failure is every waiting caller's failure.
 *
 * All of a node's records land on one partition: one projection runner then folds them as one
 * stream, where records spread over every partition would cost each partition's runner a
 * transaction of its own for a few records. Audit keys are stateless, so replay projects them the
 * same wherever they are. They go through the partition's single writer (`ActorHost.append`), to
 * join its hash chain: a partition this node owns and has caught up, the one chosen at random per
 * node while it does, so that no record travels to another node.
 *
 * Audit records are not writes a caller reads back through other capabilities, so they stay out of
 * the node's read fence; `audit.list` waits for them itself (`appended`).
 */
import { Context, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { ActorHost } from "../../streams/ActorHost.ts"
import { EventLog, type EventRecord, LogError } from "../../streams/EventLog.ts"
import * as GroupCommit from "../../streams/GroupCommit.ts"
import { NodeMetrics } from "../../streams/Metrics.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { addPosition, type Position, type Positions } from "../../streams/ReadFence.ts"

/** Records one append carries; more wait for the next. */
const MAX_RECORDS_PER_APPEND = 500

export interface AuditLogService {
  /** Appends one record with those of concurrent callers; succeeds with its position once durable. */
  readonly append: (record: EventRecord) => Effect.Effect<Position, LogError>
  /** Where this node's last audit record landed, for reads of the audit log. */
  readonly appended: () => Positions
}

export class AuditLog extends Context.Tag("svc/AuditLog")<AuditLog, AuditLogService>() {}

export interface AuditLogOptions {
  /** How long the first record of a batch waits for others (measured: docs/performance.md). */
  readonly windowMs: number
  /**
   * How long a caller waits for its record to be durable: one commit is bounded by the command
   * timeout, but a record queued behind a commit that hangs (a broker gone) would wait for two.
   */
  readonly timeoutMs: number
}

export const layer = (options: AuditLogOptions): Layer.Layer<AuditLog, never, EventLog | ActorHost | NodeMetrics> =>
  Layer.scoped(
    AuditLog,
    Effect.gen(function* () {
      const log = yield* EventLog
      const host = yield* ActorHost
      const metrics = yield* NodeMetrics
      const preferred = partitionFor(`audit-writer:${randomUUID()}`, log.partitions)
      const target = () => {
        const { ready } = host.ownership()
        return ready.includes(preferred) || ready.length === 0 ? preferred : ready[Math.floor(Math.random() * ready.length)]
      }
      const last = new Map<number, number>()
      const committer = yield* GroupCommit.make({
        maxItems: MAX_RECORDS_PER_APPEND,
        windowMs: options.windowMs,
        commit: (records: ReadonlyArray<EventRecord>) => {
          metrics.auditBatchRecords.observe(records.length)
          const partition = target()
          return Effect.map(host.append(partition, records), (offsets) => {
            addPosition(last, { partition, offset: offsets[offsets.length - 1] })
            return offsets.map((offset): Position => ({ partition, offset }))
          })
        }
      })
      const append = (record: EventRecord) =>
        committer.submit(record).pipe(
          Effect.timeoutFail({
            duration: options.timeoutMs,
            onTimeout: () => new LogError({ operation: "audit append", message: `the audit record was not durable within ${options.timeoutMs} ms` })
          })
        )
      return { append, appended: () => last } satisfies AuditLogService
    })
  )
