/**
 * What the node samples of the cluster's pace: every `sampleMs`, the log's end offsets and the read
 * models' checkpoints over every partition. A sample holds the events appended per second since the
 * previous one (the end offsets' sum is the count of events ever written, cluster-wide) and the
 * total lag. The last ten minutes are kept in memory; a node that starts has no history.
 */
import { Context, Effect, Layer, Schedule } from "effect"
import { Db, type DbService } from "../../streams/Db.ts"
import { allPartitions, EventLog, type EventLogService } from "../../streams/EventLog.ts"
import { readCheckpoints } from "../../streams/Projector.ts"
import type { PartitionProgress, ThroughputSample } from "../platform/Wire.ts"

const WINDOW_MS = 10 * 60_000

/** Each partition's end offset, the read models' checkpoint of it, and the lag between them. */
export const readProgress = (log: EventLogService, db: DbService) =>
  Effect.gen(function* () {
    const partitions = allPartitions(log.partitions)
    // the checkpoint first: read after the end, a busy partition's could pass it
    const projected = yield* readCheckpoints(db, partitions)
    const ends = yield* log.endOffsets(partitions)
    return partitions.map((partition): PartitionProgress => {
      const endOffset = ends.get(partition) ?? 0
      const at = projected.get(partition) ?? 0
      return { partition, endOffset, projected: at, lag: endOffset - at }
    })
  })

const sum = (progress: ReadonlyArray<PartitionProgress>, field: "endOffset" | "lag") => progress.reduce((n, p) => n + p[field], 0)

export interface ThroughputService {
  /** The samples of the last ten minutes, oldest first. */
  readonly history: () => ReadonlyArray<ThroughputSample>
}

export class Throughput extends Context.Tag("svc/cluster/Throughput")<Throughput, ThroughputService>() {}

export const layer = (sampleMs: number) =>
  Layer.scoped(
    Throughput,
    Effect.gen(function* () {
      const log = yield* EventLog
      const db = yield* Db
      const samples: Array<ThroughputSample & { readonly atMs: number }> = []
      let previous: { readonly atMs: number; readonly written: number } | undefined
      const sample = Effect.gen(function* () {
        const progress = yield* readProgress(log, db)
        const atMs = Date.now()
        const written = sum(progress, "endOffset")
        if (previous !== undefined && atMs > previous.atMs) {
          const eventsPerSecond = Math.round(((written - previous.written) * 100_000) / (atMs - previous.atMs)) / 100
          samples.push({ atMs, at: new Date(atMs).toISOString(), eventsPerSecond, lag: sum(progress, "lag") })
          while (samples[0].atMs < atMs - WINDOW_MS) samples.shift()
        }
        previous = { atMs, written }
      }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("cluster: sampling the log's throughput failed", cause)))
      yield* Effect.forkScoped(Effect.repeat(sample, Schedule.spaced(sampleMs)))
      return { history: () => samples.map(({ at, eventsPerSecond, lag }) => ({ at, eventsPerSecond, lag })) }
    })
  )
