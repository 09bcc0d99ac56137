/** Reading a test's partition of the log back. */
import { Chunk, Effect, Stream } from "effect"
import { EventLog, readUpTo } from "../../streams/EventLog.ts"

/** A partition's events from `from` to its end offset as it stands now. */
export const readToEnd = (partition: number, from: number) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const ends = yield* log.endOffsets([partition])
    return yield* readUpTo(log, new Map([[partition, from]]), ends).pipe(
      Stream.mapConcat((chunk) => chunk.events),
      Stream.runCollect,
      Effect.map(Chunk.toReadonlyArray),
      Effect.timeout("20 seconds")
    )
  })
