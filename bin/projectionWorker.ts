/**
 * The projection worker's entry (`streams/ProjectionWorker.ts`): in a `worker_threads` worker, its
 * own Postgres pool and its own reader of the log (the generation in use), serving the node's runs.
 */
import { Context, Effect, Layer } from "effect"
import { parentPort, workerData } from "node:worker_threads"
import { dependencyRetry } from "../streams/Backoff.ts"
import { connect, Db, service } from "../streams/Db.ts"
import { Appends, appendsLayer } from "../streams/EmbeddedLog.ts"
import type { EventLog } from "../streams/EventLog.ts"
import { serve } from "../streams/ProjectionWorker.ts"
import { actorKinds, logLayer, type ProjectionWorkerData } from "./App.ts"

const settings = workerData as ProjectionWorkerData

const program = Effect.gen(function* () {
  const sql = yield* Effect.acquireRelease(
    Effect.sync(() => connect({ url: settings.url, schema: settings.dbSchema, max: settings.poolSize, node: `${settings.nodeId} projection` })),
    (sql) => Effect.promise(() => sql.end({ timeout: 5 }))
  )
  const db = service(sql, settings.dbSchema)
  // the log's append signal is the one its tail listens on (layers are shared by reference)
  const context = yield* Layer.build(Layer.merge(logLayer(settings), appendsLayer).pipe(Layer.provide(Layer.succeed(Db, db)))).pipe(
    Effect.tapError((error) => Effect.logWarning("projection worker: opening the log failed; retrying", error)),
    Effect.retry(dependencyRetry)
  )
  const runtime = yield* Effect.provide(Effect.runtime<EventLog>(), context)
  serve(parentPort!, db, actorKinds, runtime, Context.get(context, Appends))
  return yield* Effect.never
})

Effect.runFork(Effect.scoped(program))
