/**
 * Group commit of audit records. Every invocation appends its audit record and waits for it before
 * answering; done one append per record, each record also costs the projection a transaction of
 * its own. Here the records of concurrent invocations share one append: while an append is in
 * flight the next records wait, and then go together in the next one (up to
 * `MAX_RECORDS_PER_APPEND`), so one commit and one projection batch serve them all. A lone record
 * is appended at once, so a quiet node adds no delay.
 *
 * Every append of this process lands on one partition (that of `PARTITION_KEY`, chosen at
 * random per process), not on each record key's own: one projection runner then sees the records
 * as one stream and folds whatever has piled up in one transaction, where records spread over
 * every partition cost each partition's runner a transaction of its own for a few records. Audit
 * keys are unique (`audit:<invocationId>`, always seq 1) and stateless, so nothing reads them by
 * partition, and replay projects them the same wherever they are. The price: commands on that
 * partition wait behind its audit backlog when the node is overloaded.
 *
 * Each caller still waits for its own record to be durably appended: the append's failure is
 * every waiting caller's failure, and no caller is answered before the append that holds its
 * record has succeeded.
 */
import { Effect, Exit } from "effect"
import { randomUUID } from "node:crypto"
import type { EventLogService, EventRecord, LogError } from "../streams/EventLog.ts"

/** The partition key of this process's audit appends. */
const PARTITION_KEY = `audit-writer:${randomUUID()}`

/** Records one append carries; more wait for the next. */
export const MAX_RECORDS_PER_APPEND = 500

interface Waiting {
  readonly record: EventRecord
  readonly resume: (effect: Effect.Effect<void, LogError>) => void
}

interface Writer {
  readonly waiting: Waiting[]
  appending: boolean
}

/** One writer per log (tests run several nodes, with several logs, in one process). */
const writers = new WeakMap<EventLogService, Writer>()

const writerOf = (log: EventLogService): Writer => {
  let writer = writers.get(log)
  if (writer === undefined) {
    writer = { waiting: [], appending: false }
    writers.set(log, writer)
  }
  return writer
}

const drain = async (log: EventLogService, writer: Writer): Promise<void> => {
  if (writer.appending) return
  writer.appending = true
  try {
    while (writer.waiting.length > 0) {
      const group = writer.waiting.splice(0, MAX_RECORDS_PER_APPEND)
      const records = group.map((w) => w.record)
      const exit = await Effect.runPromiseExit(log.append(PARTITION_KEY, records))
      const outcome: Effect.Effect<void, LogError> = Exit.isSuccess(exit) ? Effect.void : Exit.failCause(exit.cause)
      for (const { resume } of group) resume(outcome)
    }
  } finally {
    writer.appending = false
  }
}

/** Appends one audit record, together with those of concurrent invocations; succeeds once it is in the log. */
export const appendAudit = (log: EventLogService, record: EventRecord): Effect.Effect<void, LogError> =>
  Effect.async<void, LogError>((resume) => {
    const writer = writerOf(log)
    writer.waiting.push({ record, resume })
    void drain(log, writer)
  })
