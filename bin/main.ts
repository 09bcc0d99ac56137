/**
 * `npm start`: one node of the platform. With no DATABASE_URL it runs embedded PGlite under the
 * data directory; with no KAFKA_BROKERS it runs the embedded log.
 */
import { Effect, Exit } from "effect"
import { existsSync, renameSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { loadConfig } from "../src/platform/Config.ts"
import { causeFields, errorFields, makeNodeLog } from "../src/platform/Logging.ts"
import { startNode } from "./node.ts"

const config = loadConfig()
// the node's own lines, in its format, beside those the node writes
const log = makeNodeLog({ ...config.logging, node: config.nodeId })

/**
 * A fresh checkout has no app build: make it once (a few seconds) rather than serve no app. It is
 * built beside the folder and renamed into place, so nodes starting together never serve, or
 * build over, a half-written one.
 */
const buildAppWhenMissing = Effect.promise(async () => {
  if (process.env.APP_DIR || existsSync(join(config.appDir, "index.html"))) return
  log.info("building the web app", { into: config.appDir })
  const { build } = await import("vite")
  const outDir = `${config.appDir}.${process.pid}.tmp`
  await build({ configFile: fileURLToPath(new URL("../app/vite.config.ts", import.meta.url)), logLevel: "warn", build: { outDir, emptyOutDir: true } })
  try {
    // fails when another node's build is already there (a folder that is not empty)
    renameSync(outDir, config.appDir)
  } catch {
    // another node put its build in place first: serve that one
    rmSync(outDir, { recursive: true, force: true })
  }
})

const program = Effect.gen(function* () {
  yield* buildAppWhenMissing
  const node = yield* startNode(config)
  const { bootstrap: data } = node
  log.info("listening", { address: `${config.host}:${node.port}`, eventLog: node.log.mode, database: config.databaseUrl ? "postgres" : "embedded postgres" })
  if (config.metrics !== undefined) log.info("serving metrics", { url: `http://${config.metrics.host}:${node.metricsPort}/metrics` })
  // secrets are never logged: the keys and the Owner's first password are in the file (mode 0600)
  log.info(node.bootstrapped ? "bootstrapped; the Owner's password and the bootstrap keys are in the file" : "reusing the bootstrap organization", {
    file: `${config.dataDir}/bootstrap.json`,
    org: data.orgSlug,
    workspace: data.workspaceSlug,
    owner: data.ownerEmail
  })
  const stopped = yield* Effect.raceFirst(stopSignal, fault)
  log.info("draining", { signal: stopped, timeoutMs: config.drainTimeoutMs })
  const drained = yield* Effect.promise(() => node.drain(config.drainTimeoutMs))
  log.info("stopping", drained ? {} : { unfinished: "requests or turns were still running at the drain's bound; their turns end engine_unavailable" })
})

/**
 * SIGINT (Ctrl-C) or SIGTERM: the node drains (new requests refused, those taken answered, within
 * DRAIN_TIMEOUT_MS), stops, closing what it started, and exits 0.
 */
const stopSignal = Effect.async<NodeJS.Signals>((resume) => {
  const stop = (signal: NodeJS.Signals) => resume(Effect.succeed(signal))
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
})

/**
 * The last line of defence: an exception or rejection nothing caught leaves the process in a state
 * nobody planned for. It is logged with its cause, and the node stops as on a signal but exits
 * non-zero, so that its supervisor starts it again, rather than run on half dead.
 */
const fault = Effect.async<never, Error>((resume) => {
  let first = true
  const onFault = (what: string) => (error: unknown) => {
    log.error(`${what}; stopping`, { error: errorFields(error) })
    if (first) resume(Effect.fail(new Error(what, { cause: error })))
    first = false
  }
  process.on("uncaughtException", onFault("uncaught exception"))
  process.on("unhandledRejection", onFault("unhandled rejection"))
})

/** A stop that hangs (a dependency that never answers) still ends the process, non-zero. */
const STOP_TIMEOUT_MS = 30_000

const stopWithin = (ms: number) => setTimeout(() => {
  log.error("svc did not stop in time; exiting", { timeoutMs: ms })
  process.exit(1)
}, ms).unref()

Effect.runPromiseExit(Effect.scoped(Effect.onExit(program, () => Effect.sync(() => stopWithin(STOP_TIMEOUT_MS))))).then((exit) => {
  if (Exit.isFailure(exit)) {
    log.error("svc stopped", { error: causeFields(exit.cause) })
    process.exit(1)
  }
  process.exit(0)
})
