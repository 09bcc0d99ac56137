/** Reading a test's partition of the log back. */
import { Chunk, Effect, Stream } from "effect"
import { EventLog, readUpTo } from "../../streams/EventLog.ts"

/**
 * A partition's events from `from` to its end offset as it stands now, or, given `through` (an
 * acknowledged append's last offset), once the end has passed it: a Kafka transaction is durable
 * when its commit is acknowledged, and readable once the coordinator has written its markers.
 */
export const readToEnd = (partition: number, from: number, through?: number) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    let ends = yield* log.endOffsets([partition])
    while (through !== undefined && ends.get(partition)! <= through) {
      yield* Effect.sleep("10 millis")
      ends = yield* log.endOffsets([partition])
    }
    return yield* readUpTo(log, new Map([[partition, from]]), ends).pipe(
      Stream.mapConcat((chunk) => chunk.events),
      Stream.runCollect,
      Effect.map(Chunk.toReadonlyArray),
      Effect.timeout("20 seconds")
    )
  })
