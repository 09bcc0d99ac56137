/** Waits for a node's projections to reach the end of the log (audit records are projected asynchronously). */
import { Effect } from "effect"
import { allPartitions, EventLog } from "../../streams/EventLog.ts"
import { readCheckpoints } from "../../streams/Projector.ts"
import type { DbService } from "../../streams/Db.ts"

export const caughtUp = (db: DbService, timeoutMs = 20_000) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const partitions = allPartitions(log.partitions)
    const ends = yield* log.endOffsets(partitions)
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const applied = yield* readCheckpoints(db, partitions)
      if (partitions.every((p) => applied.get(p)! >= ends.get(p)!)) return
      if (Date.now() > deadline) return yield* Effect.die(new Error(`projections did not catch up: ${[...applied]} vs ${[...ends]}`))
      yield* Effect.sleep("50 millis")
    }
  })
