/**
 * One node of the platform, started within a scope: Postgres (embedded unless a URL is given),
 * the application layers, the bootstrap organization and the gateway. `main` runs one until a
 * signal; tests run several.
 */
import { type Cause, type Clock, Effect, FiberRef, Layer, Runtime } from "effect"
import { describeFailure } from "../gateway/errors.ts"
import { serveMetrics } from "../gateway/metricsListener.ts"
import { Readiness } from "../gateway/readiness.ts"
import { startGateway } from "../gateway/server.ts"
import { TurnRegistry } from "../src/assistant/TurnRegistry.ts"
import { NodeAdmission } from "../src/platform/Admission.ts"
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
/**
 * A draining node stops listening only once no request was refused for this long: a load balancer
 * still sending has not yet seen its readiness go false, and its requests are answered (503) rather
 * than find nothing listening.
 */
const DRAIN_QUIET_MS = 1_000
/** Turns still running at the drain's bound are stopped; how long they may take to record their end. */
const DRAIN_TURN_STOP_MS = 5_000
/** How long the commands and appends a draining node took may take to finish before its writers close. */
const DRAIN_HAND_OVER_MS = 5_000
/**
 * Once a draining node's requests are answered and its turns ended, how long its streams may take
 * to write their last events; a stream with no turn behind it (an A2A resubscribe) is ended then.
 */
const DRAIN_STREAMS_GRACE_MS = 2_000
const DRAIN_POLL_MS = 20

/** Waits until `done`, or until `deadline` (epoch ms); whether it was done. */
const waitUntil = async (done: () => boolean, deadline: number) => {
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS))
  return done()
}


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
      Runtime.setFiberRef(
        yield* Effect.provide(
          options.clock === undefined ? Effect.runtime<never>() : Effect.withClock(Effect.runtime<never>(), options.clock),
          Layer.succeedContext(context)
        ),
        CurrentReadFence,
        nodeFence(host)
      ),
      FiberRef.currentTracerEnabled,
      config.tracing
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
    const readiness = new Readiness(metrics.registry)
    const turns = context.unsafeMap.get(TurnRegistry.key) as TurnRegistry["Type"]
    const { runPlaces } = context.unsafeMap.get(NodeAdmission.key) as NodeAdmission["Type"]
    /**
     * The first part of a graceful stop, before the node's scope closes: refuse new requests and
     * turns, then wait (up to `timeoutMs`) for the requests and turns taken, the approved calls
     * running or queued for a place (their request may have been answered "queued" or
     * "dispatched"), and for the load balancer to stop sending. Turns still running then are
     * stopped, and record their end (failed `engine_unavailable`) while the node still runs; an
     * approved call left then is ended by the sweep. Whether all ended within the bound.
     */
    const drain = async (timeoutMs: number) => {
      readiness.drain()
      turns.drain()
      const deadline = Date.now() + timeoutMs
      // a place is held by a turn or an approved call; one queued for a place waits only while all are held
      const idle = () => readiness.requests === 0 && turns.running() === 0 && runPlaces.held() === 0
      const ended = await waitUntil(() => idle() && readiness.quietFor >= DRAIN_QUIET_MS, deadline)
      if (!ended) {
        turns.stopAll()
        await waitUntil(() => turns.running() === 0, Date.now() + DRAIN_TURN_STOP_MS)
      }
      await waitUntil(() => readiness.streams === 0, Date.now() + DRAIN_STREAMS_GRACE_MS)
      // on Kafka its partitions go to the other nodes once it leaves the group, as the scope closes;
      // the embedded log has no other node to take them
      if (log.mode !== "embedded") await host.handOver(DRAIN_HAND_OVER_MS)
      return ended
    }
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
          health: () => ({ status: "ok", nodeId: host.nodeId, log: { mode: log.mode, partitions: log.partitions }, partitions: host.ownership() }),
          readiness
        })
      ),
      (gateway) => Effect.sync(gateway.close)
    )
    return { port: gateway.port, metricsPort: metricsListener?.port, host, log, db, metrics, runtime, bootstrap: data, bootstrapped: created, drain }
  }).pipe(withNodeLog(nodeLog))
}
