/**
 * `npm start`: one node of the platform. With no DATABASE_URL it runs embedded PGlite under the
 * data directory; with no KAFKA_BROKERS it runs the embedded log.
 */
import { Effect, Exit, Layer, Runtime } from "effect"
import { startGateway } from "../gateway/server.ts"
import { ActorHost } from "../streams/ActorHost.ts"
import { EventLog } from "../streams/EventLog.ts"
import { appLayer } from "./App.ts"
import { bootstrap } from "./Bootstrap.ts"
import { loadConfig } from "./Config.ts"
import { startEmbeddedPostgres } from "./EmbeddedPostgres.ts"

const config = loadConfig()

const program = Effect.gen(function* () {
  const scope = yield* Effect.scope
  const databaseUrl = config.databaseUrl ?? (yield* startEmbeddedPostgres(config.dataDir)).url
  // PGlite has one backend: one connection keeps transactions whole
  const poolSize = config.databaseUrl === undefined ? 1 : 10
  const context = yield* Layer.buildWithScope(appLayer(config, databaseUrl, poolSize), scope)
  const runtime = yield* Effect.provide(Effect.runtime<never>(), Layer.succeedContext(context))
  const host = context.unsafeMap.get(ActorHost.key) as ActorHost["Type"]
  const log = context.unsafeMap.get(EventLog.key) as EventLog["Type"]

  const { created, data } = yield* bootstrap(config.dataDir, config.baseUrl).pipe(Effect.provide(context))
  const gateway = yield* Effect.promise(() =>
    startGateway({
      host: config.host,
      port: config.port,
      maxBodyBytes: config.maxBodyBytes,
      run: (effect) => Runtime.runPromiseExit(runtime)(effect as Effect.Effect<any, any, never>),
      health: () => ({ status: "ok", nodeId: host.nodeId, log: { mode: log.mode, partitions: log.partitions }, partitions: host.ownership() })
    })
  )
  yield* Effect.addFinalizer(() => Effect.sync(gateway.close))
  console.log(`svc listening on ${config.host}:${gateway.port} (node ${host.nodeId}, log ${log.mode}, ${config.databaseUrl ? "postgres" : "embedded postgres"})`)
  console.log(`${created ? "bootstrapped" : "reusing"} ${config.dataDir}/bootstrap.json: org ${data.orgSlug}, workspace ${data.workspaceSlug}, owner ${data.ownerEmail}`)
  if (created) {
    console.log(`  workspace key: ${data.workspaceKey}`)
    console.log(`  organization key: ${data.orgKey}`)
  }
  yield* Effect.async<void>((resume) => {
    const stop = () => resume(Effect.void)
    process.once("SIGINT", stop)
    process.once("SIGTERM", stop)
  })
})

Effect.runPromiseExit(Effect.scoped(program)).then((exit) => {
  if (Exit.isFailure(exit)) {
    console.error("svc stopped:", exit.cause)
    process.exit(1)
  }
  process.exit(0)
})

