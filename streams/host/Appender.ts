/**
 * The raw append: records no actor decides (audit records, telemetry batches, keys `svc
 * issue-key` writes) appended to a partition this node owns through the partition's one writer, so
 * that they join its hash chain. Reaching another node's writer is the router's (`Router.ts`).
 */
import { Effect, Either, Runtime } from "effect"
import type { EventLog, EventLogService, EventRecord, PartitionWriter } from "../EventLog.ts"
import { LogError } from "../EventLog.ts"
import { addPosition } from "../ReadFence.ts"
import { type AppendReply, notOwner } from "./Outcome.ts"
import { type Ownership, type Partitions, stalledOutcome } from "./Ownership.ts"

/** An append that hangs (a broker gone quiet) must not hold the partition's queue, or its caller, forever. */
export const boundedAppend = (writer: PartitionWriter, records: ReadonlyArray<EventRecord>, timeoutMs: number) =>
  writer.append(records).pipe(
    Effect.timeoutFail({
      duration: timeoutMs,
      onTimeout: () => new LogError({ operation: "append", message: `no answer from the log within ${timeoutMs} ms` })
    })
  )

export interface AppenderEnv {
  readonly log: EventLogService
  readonly runtime: Runtime.Runtime<EventLog>
  readonly partitions: Pick<Partitions, "owned" | "isOwned" | "resync" | "appended" | "handingOver">
  readonly counted: (ownership: Ownership, events: number) => void
  /** The highest offset this node acknowledged, per partition. */
  readonly acked: Map<number, number>
  readonly commandTimeoutMs: number
}

/**
 * Appends through this node's writer of the partition, once it is ready; undefined when this
 * node does not own it. A failed append is handled as a worker's is: the partition catches up
 * again (and an unknown outcome reopens the writer) before anything else is appended.
 */
export const makeAppendHere = ({ log, runtime, partitions, counted, acked, commandTimeoutMs }: AppenderEnv) => {
  const run = Runtime.runPromise(runtime)
  return (partition: number, records: ReadonlyArray<EventRecord>): Promise<AppendReply> | undefined => {
    const ownership = partitions.owned.get(partition)
    if (ownership === undefined || partitions.handingOver()) return undefined
    if (ownership.stalled !== undefined) return Promise.resolve(stalledOutcome(ownership) as AppendReply)
    ownership.appending++
    return ownership.ready.then(async (ready): Promise<AppendReply> => {
      const writer = ownership.writer
      if (!ready || !partitions.isOwned(ownership) || writer === undefined) return notOwner() as AppendReply
      const appended = await run(Effect.either(boundedAppend(writer.writer, records, commandTimeoutMs)))
      if (Either.isRight(appended)) {
        addPosition(acked, { partition, offset: appended.right[appended.right.length - 1] })
        // records no actor decides change no cached state: the cache holds everything up to them too
        partitions.appended(ownership, appended.right)
        counted(ownership, records.length)
        return { ok: true, offsets: appended.right }
      }
      const error = appended.left
      // the embedded log's fence is per key: a record whose key and seq are taken (a retried
      // telemetry batch) says nothing about the partition's owner
      if (error._tag === "LogFenced" && log.mode === "embedded") return { ok: false, unavailable: "failure", message: error.message }
      if (partitions.isOwned(ownership) && ownership.writer === writer) partitions.resync(ownership, error._tag !== "LogFenced")
      return { ok: false, unavailable: error._tag === "LogFenced" ? "ownership_lost" : "failure", message: error.message }
    }).finally(() => {
      ownership.appending--
    })
  }
}
