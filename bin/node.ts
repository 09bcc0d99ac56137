/**
 * One node of the platform, started within a scope: Postgres (embedded unless a URL is given),
 * the application layers, the bootstrap organization and the gateway. `main` runs one until a
 * signal; tests run several.
 */
import { type Cause, type Clock, Effect, Layer, Runtime } from "effect"
import { describeFailure } from "../gateway/errors.ts"
import { serveMetrics } from "../gateway/metricsListener.ts"
import { startGateway } from "../gateway/server.ts"
import { ActorHost } from "../streams/ActorHost.ts"
import { EventLog } from "../streams/EventLog.ts"
import { exposition, LATENCY_BUCKETS, NodeMetrics } from "../streams/Metrics.ts"
import { appLayer, registry } from "./App.ts"
import { CurrentReadFence } from "../streams/ReadFence.ts"
import { nodeFence } from "../src/checkpoint/Background.ts"
import { bootstrap } from "../src/identity/Bootstrap.ts"
import type { AppConfig } from "../src/platform/Config.ts"
import { Db } from "../streams/Db.ts"
import { startEmbeddedPostgres } from "../src/platform/EmbeddedPostgres.ts"
import { FailureDescriber } from "../src/platform/Failures.ts"
import { makeNodeLog, withNodeLog } from "../src/platform/Logging.ts"
import type { MetricsPort } from "../src/platform/Metrics.ts"
import type { Registry } from "prom-client"

const BOOTSTRAP_PROJECTION_TIMEOUT_MS = 30_000
/** How long a stopping node waits for its read models to fold what it acknowledged. */
const STOP_PROJECTION_TIMEOUT_MS = 10_000


/** The node's registry as the gateway's metrics port. */
const metricsPort = (registry: Registry): MetricsPort => ({ registry, latencyBuckets: LATENCY_BUCKETS, scrape: () => exposition(registry) })
export interface NodeOptions {
  /** The clock requests see (tests inject one to step through key grace periods and expiries). */
  readonly clock?: Clock.Clock
  /** Where the node's log lines go instead of stdout (tests read them). */
  readonly logSink?: (line: string) => void
}

export const startNode = (config: AppConfig, options: NodeOptions = {}) => {
  const nodeLog = makeNodeLog({ ...config.logging, node: config.nodeId, sink: options.logSink })
  return Effect.gen(function* () {
    const scope = yield* Effect.scope
    const databaseUrl = config.databaseUrl ?? (yield* startEmbeddedPostgres(config.dataDir)).url
    // PGlite has one backend: one connection keeps transactions whole
    const poolSize = config.databaseUrl === undefined ? 1 : 10
    // the projection folds one batch at a time; the embedded log's three readers (the projection's,
    // the automations reactor's, the run signals') tail on this pool too, and must not queue its batches
    const projectionPoolSize = config.databaseUrl === undefined ? 0 : 4
    // the agent's calls have no request line of their own: a 5xx among them gets a line here
    const describeAgentFailure = <E>(cause: Cause.Cause<E>) => {
      const described = describeFailure(cause)
      if (described.failure !== undefined) nodeLog.error("agent capability call failed", { status: described.status, error: described.failure })
      return described
    }
    const layer = appLayer(config, databaseUrl, poolSize, projectionPoolSize).pipe(Layer.provideMerge(Layer.succeed(FailureDescriber, describeAgentFailure)))
    // the same clock for requests and for the layers' own timers (question and run sweepers)
    const build = Layer.buildWithScope(layer, scope)
    const context = yield* (options.clock === undefined ? build : Effect.withClock(build, options.clock))
    const host = context.unsafeMap.get(ActorHost.key) as ActorHost["Type"]
    // what runs on the node (requests, turns, operator tools) reads what the node acknowledged;
    // `invoke` narrows it to what was acknowledged before the call, plus the call's own writes
    const runtime = Runtime.setFiberRef(
      yield* Effect.provide(
        options.clock === undefined ? Effect.runtime<never>() : Effect.withClock(Effect.runtime<never>(), options.clock),
        Layer.succeedContext(context)
      ),
      CurrentReadFence,
      nodeFence(host)
    )
    const log = context.unsafeMap.get(EventLog.key) as EventLog["Type"]
    const db = context.unsafeMap.get(Db.key) as Db["Type"]
    const metrics = metricsPort((context.unsafeMap.get(NodeMetrics.key) as NodeMetrics["Type"]).registry)
    // scraped from the start: a node catching up with the log shows its projection lag
    const metricsListener = config.metrics === undefined
      ? undefined
      : yield* Effect.acquireRelease(
          Effect.promise(() => serveMetrics({ ...config.metrics!, metrics })),
          (listener) => Effect.sync(listener.close)
        )

    const { created, data } = yield* bootstrap(config.dataDir, config.baseUrl).pipe(Effect.provide(context))
    // the node serves once its partitions' read models hold the log as it stood (what a previous run
    // of the node acknowledged included) and its bootstrap organization is readable
    yield* Effect.promise(() => host.caughtUp())
    yield* Effect.promise(() => host.awaitProjected(host.unprojected(), BOOTSTRAP_PROJECTION_TIMEOUT_MS))
    // on stop, once the gateway no longer listens (finalizers run last first): the read models fold
    // what the node acknowledged, so that they hold the log as it ends, as a replay would
    yield* Effect.addFinalizer(() => Effect.promise(() => host.awaitProjected(host.unprojected(), STOP_PROJECTION_TIMEOUT_MS)))
    const gateway = yield* Effect.acquireRelease(
      Effect.promise(() =>
        startGateway({
          host: config.host,
          port: config.port,
          maxBodyBytes: config.maxBodyBytes,
          baseUrl: config.baseUrl,
          registry,
          secureCookies: config.secureCookies,
          corsOrigins: config.corsOrigins,
          appDir: config.appDir,
          metrics,
          log: nodeLog,
          maxAttachmentBytes: config.assistant.maxAttachmentBytes,
          run: (effect) => Runtime.runPromiseExit(runtime)(effect as Effect.Effect<any, any, never>),
          health: () => ({ status: "ok", nodeId: host.nodeId, log: { mode: log.mode, partitions: log.partitions }, partitions: host.ownership() })
        })
      ),
      (gateway) => Effect.sync(gateway.close)
    )
    return { port: gateway.port, metricsPort: metricsListener?.port, host, log, db, metrics, runtime, bootstrap: data, bootstrapped: created }
  }).pipe(withNodeLog(nodeLog))
}
