/**
 * What this node tells the others of itself, for `cluster.get`: its build, whether it drains, and
 * the partitions it is caught up and deciding on. The consumer group says which node owns what;
 * the rest only the node knows, so every `periodMs` it writes its report to `cluster_nodes`, and
 * removes it as it stops. A report not refreshed for three periods is left out (its node died),
 * and the runs that node ran are ended (src/assistant/TurnRegistry.ts).
 */
import { Context, Effect, Layer, Schedule } from "effect"
import manifest from "../../package.json" with { type: "json" }
import { ActorHost } from "../../streams/ActorHost.ts"
import { Db, type DbError } from "../../streams/Db.ts"
import { TurnRegistry } from "../assistant/TurnRegistry.ts"
import { forgetNode, freshReports, type NodeReport, reportNode } from "./Queries.ts"

export interface PresenceService {
  /** The live nodes' latest reports, by node id. */
  readonly reports: Effect.Effect<ReadonlyMap<string, NodeReport>, DbError>
}

export class Presence extends Context.Tag("svc/cluster/Presence")<Presence, PresenceService>() {}

/** How long a node reporting every `periodMs` may go unheard before it counts as gone. */
export const goneAfterMs = (periodMs: number) => 3 * periodMs

export const layer = (periodMs: number) =>
  Layer.scoped(
    Presence,
    Effect.gen(function* () {
      const host = yield* ActorHost
      const turns = yield* TurnRegistry
      const db = yield* Db
      const startedAt = new Date().toISOString()
      const report = Effect.suspend(() =>
        reportNode({ nodeId: host.nodeId, version: manifest.version, draining: !turns.accepting(), ready: host.ownership().ready, startedAt })
      ).pipe(
        Effect.provideService(Db, db),
        Effect.catchAllCause((cause) => Effect.logWarning("cluster: reporting this node failed", cause))
      )
      yield* Effect.addFinalizer(() => forgetNode(host.nodeId).pipe(Effect.provideService(Db, db), Effect.ignore))
      yield* Effect.forkScoped(Effect.repeat(report, Schedule.spaced(periodMs)))
      return { reports: freshReports(goneAfterMs(periodMs)).pipe(Effect.provideService(Db, db)) }
    })
  )
