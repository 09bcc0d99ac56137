/**
 * Signed checkpoints (`Checkpoints.ts`): once `everyEvents` were appended through the partition's
 * writer since its last checkpoint, or every `everySeconds` while some were, the writer appends
 * one naming its last event's offset and hash. The checkpoint joins the chain like any record; a
 * failed one is tried again at the next count or tick.
 */
import { Effect, Either, Runtime } from "effect"
import type { AuditSignerService } from "../Checkpoints.ts"
import type { EventLog } from "../EventLog.ts"
import type { Ownership, Partitions } from "./Ownership.ts"

/** Checkpoints are operations, not domain time: real time whatever clock the node's logic sees. */
const realSleep = (ms: number) =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(timer))
  })

export const makeAuditCheckpoints = (
  signer: AuditSignerService | undefined,
  partitions: Pick<Partitions, "owned" | "isOwned" | "resync">,
  runtime: Runtime.Runtime<EventLog>
) => {
  const run = Runtime.runPromise(runtime)

  /** Counts events appended through the partition's writer; enough of them sign a checkpoint. */
  const counted = (ownership: Ownership, events: number) => {
    ownership.uncheckpointed += events
    if (signer !== undefined && ownership.uncheckpointed >= signer.everyEvents) void checkpoint(ownership)
  }

  const checkpoint = async (ownership: Ownership) => {
    const writer = ownership.writer?.writer
    const head = writer?.head()
    if (signer === undefined || writer === undefined || head === undefined || ownership.checkpointing) return
    if (!ownership.caughtUp || !partitions.isOwned(ownership)) return
    ownership.checkpointing = true
    const covered = ownership.uncheckpointed
    try {
      const record = signer.record({ partition: ownership.partition, offset: head.offset, head: head.hash, at: new Date().toISOString() })
      const appended = await run(Effect.either(writer.append([record])))
      if (Either.isRight(appended)) ownership.uncheckpointed = Math.max(0, ownership.uncheckpointed - covered)
      else if (partitions.isOwned(ownership) && ownership.writer?.writer === writer) {
        partitions.resync(ownership, appended.left._tag !== "LogFenced")
      }
    } finally {
      ownership.checkpointing = false
    }
  }

  /** Every `everySeconds`, a checkpoint for each owned partition that appended since its last; runs until interrupted. */
  const ticker: Effect.Effect<void> = signer === undefined
    ? Effect.void
    : Effect.forever(
        Effect.zipRight(
          realSleep(signer.everySeconds * 1000),
          Effect.sync(() => {
            for (const ownership of partitions.owned.values()) if (ownership.uncheckpointed > 0) void checkpoint(ownership)
          })
        )
      )

  return { counted, ticker }
}
