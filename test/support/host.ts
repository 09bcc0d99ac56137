/**
 * An actor host for the given actor kinds on the embedded log (one local node owning every
 * partition), against real Postgres in a schema of its own, built in a scope the test closes.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import { type AnyActorKind, kindRegistry } from "../../actors/kernel.ts"
import * as Db from "../../streams/Db.ts"
import * as ActorHost from "../../streams/ActorHost.ts"
import * as EmbeddedLog from "../../streams/EmbeddedLog.ts"
import * as LocalCluster from "../../streams/LocalCluster.ts"
import * as NodeMetrics from "../../streams/Metrics.ts"
import { databaseUrl, uniqueName } from "./env.ts"

export interface ActorHostOptions {
  readonly partitions: number
  /** The schema of the read models (the log lives in `${schema}_log`); a fresh one unless named. */
  readonly schema?: string
}

export interface TestActorHost {
  readonly host: ActorHost.ActorHostService
  readonly db: Db.DbService
  /** Runs a read-model query against this host's database. */
  readonly read: <A>(effect: Effect.Effect<A, Db.DbError, Db.Db>) => Promise<A>
  /** Closes the host's scope: the host, its log and its database connections. */
  readonly stop: () => Promise<void>
}

const hostLayer = (kinds: ReadonlyArray<AnyActorKind>, schema: string, partitions: number) =>
  ActorHost.layer({ commandTimeoutMs: 10_000, cachedKeysPerPartition: 16 }).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        EmbeddedLog.layer({ logSchema: `${schema}_log`, partitions }),
        LocalCluster.layer("node-a", partitions),
        Layer.succeed(ActorHost.ActorKinds, kindRegistry(kinds)),
        NodeMetrics.layer
      ).pipe(Layer.provideMerge(Db.layer({ url: databaseUrl, schema, max: 4 })))
    )
  )

export const startActorHost = async (kinds: ReadonlyArray<AnyActorKind>, options: ActorHostOptions): Promise<TestActorHost> => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(hostLayer(kinds, options.schema ?? uniqueName("t"), options.partitions), scope))
  const db = context.unsafeMap.get(Db.Db.key) as Db.DbService
  const host = context.unsafeMap.get(ActorHost.ActorHost.key) as ActorHost.ActorHostService
  return {
    host,
    db,
    // as a read through the API would: after the read models hold every acknowledged write
    read: (effect) => host.awaitProjected(host.unprojected(), 10_000).then(() => Effect.runPromise(Effect.provideService(effect, Db.Db, db))),
    stop: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
