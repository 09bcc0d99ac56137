/**
 * The host's gauges, read when scraped: the owned partitions as they stand, how far each
 * projection is behind the log's end (asked of the log then: another owner's appends before this
 * node's count too), and the statements the node's pools have sent.
 */
import { Effect, Option, Runtime } from "effect"
import { Counter, Gauge } from "prom-client"
import type { Gate } from "../Admission.ts"
import type { DbService } from "../Db.ts"
import type { EventLog, EventLogService } from "../EventLog.ts"
import type { NodeMetricsService } from "../Metrics.ts"
import type { Ownership } from "./Ownership.ts"

/** How long a scrape waits for the log's end offsets before it reports no projection lag. */
const LAG_SCRAPE_TIMEOUT_MS = 2_000

export const registerGauges = (
  metrics: NodeMetricsService,
  db: DbService,
  log: EventLogService,
  owned: ReadonlyMap<number, Ownership>,
  runtime: Runtime.Runtime<EventLog>,
  queued: Gate | undefined
) => {
  const run = Runtime.runPromise(runtime)
  const registers = [metrics.registry]
  const { statements } = db
  if (statements !== undefined) {
    new Counter({
      name: "svc_db_statements_total",
      help: "Statements sent to Postgres, by pool: requests (and everything else the node does), and the projection's where it has its own",
      labelNames: ["pool"],
      registers,
      collect() {
        this.reset()
        this.inc({ pool: "requests" }, statements())
        if (db.projection !== db) this.inc({ pool: "projection" }, db.projection.statements?.() ?? 0)
      }
    })
  }
  new Gauge({
    name: "svc_partitions_owned",
    help: "Log partitions this node owns",
    registers,
    collect() {
      this.set(owned.size)
    }
  })
  new Gauge({
    name: "svc_partitions_ready",
    help: "Owned partitions caught up with the log and deciding",
    registers,
    collect() {
      let ready = 0
      for (const ownership of owned.values()) if (ownership.caughtUp) ready++
      this.set(ready)
    }
  })
  new Gauge({
    name: "svc_commands_held",
    help: "Commands this node's partition workers hold (queued or being decided), over every partition",
    registers,
    collect() {
      let held = 0
      for (const ownership of owned.values()) held += ownership.queue.length
      this.set(queued?.held() ?? held)
    }
  })
  new Gauge({
    name: "svc_projection_lag_offsets",
    help: "Per owned partition: the log's end offset minus the next offset the read models will apply",
    labelNames: ["partition"],
    registers,
    async collect() {
      this.reset()
      if (owned.size === 0) return
      const ends = await run(log.endOffsets([...owned.keys()]).pipe(
        Effect.timeout(LAG_SCRAPE_TIMEOUT_MS),
        Effect.tapError((error) => Effect.logWarning("metrics: the log's end offsets could not be read; no projection lag this scrape", error)),
        Effect.option
      ))
      if (Option.isNone(ends)) return
      for (const [partition, end] of ends.value) {
        const ownership = owned.get(partition)
        if (ownership !== undefined) this.set({ partition: String(partition) }, Math.max(0, end - ownership.projection.next))
      }
    }
  })
}
