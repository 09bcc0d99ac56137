/**
 * The projection off the request thread (`PROJECTION_WORKER=true`): a `worker_threads` worker with
 * its own Postgres pool and its own reader of the log runs `project` for the partitions the actor
 * host asks for, and posts each commit's checkpoint back. The thread that serves HTTP then decides
 * and appends only; waits for projected positions are settled by those messages exactly as by the
 * in-thread runner's callback (`host/Ownership.ts`).
 *
 * Both sides of the protocol live here: `spawn` (the node's thread) and `serve` (the worker's,
 * started by `bin/projectionWorker.ts`, which builds the pool and the log there). The embedded
 * log's appends are heard in-process (`EmbeddedLog.Appends`); the node forwards them so the
 * worker's tail wakes as promptly as the node's own would, and its poll finds the rest.
 *
 * A worker that dies is started again, and every run it had resumes from its checkpoints.
 */
import { Context, Effect, Fiber, Runtime, type Scope } from "effect"
import type { EventEmitter } from "node:events"
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { type MessagePort, Worker } from "node:worker_threads"
import type { KindRegistry } from "../actors/kernel.ts"
import type { DbService } from "./Db.ts"
import type { EventLog } from "./EventLog.ts"
import { databaseUnreachable } from "./Backoff.ts"
import { project } from "./Projector.ts"

/**
 * Projects `partitions` until interrupted, telling `onProjected` each commit's next offset (and the
 * starting one) and `onFailed` each failure before its retry: the in-thread `project`, or a run in
 * the worker.
 */
export type ProjectPartitions = (
  partitions: ReadonlyArray<number>,
  onProjected: (partition: number, next: number) => void,
  onFailed: (failure: ProjectionFailure) => void
) => Effect.Effect<unknown, unknown, EventLog>

/** A failed try of the projection, as told across the worker's boundary. */
export interface ProjectionFailure {
  readonly message: string
  /** The database did not answer: the projection cannot move until it is back. */
  readonly databaseUnreachable: boolean
}

const failureOf = (error: { readonly message: string }): ProjectionFailure => ({ message: error.message, databaseUnreachable: databaseUnreachable(error) })

/** Present when the node projects in a worker; absent: the actor host projects in its own thread. */
export class ProjectionRunner extends Context.Tag("svc/streams/ProjectionRunner")<ProjectionRunner, ProjectPartitions>() {}

export const inThread = (db: DbService, kinds: KindRegistry): ProjectPartitions => (partitions, onProjected, onFailed) =>
  project(db, kinds, partitions, onProjected, (error) => onFailed(failureOf(error)))

type ToWorker =
  | { readonly type: "project"; readonly run: number; readonly partitions: ReadonlyArray<number> }
  | { readonly type: "stop"; readonly run: number }
  | { readonly type: "appended"; readonly channel: string; readonly partition: number }

type FromWorker =
  | { readonly type: "projected"; readonly run: number; readonly partition: number; readonly next: number }
  | { readonly type: "failed"; readonly run: number; readonly failure: ProjectionFailure }

interface Run {
  readonly partitions: ReadonlyArray<number>
  readonly onProjected: (partition: number, next: number) => void
  readonly onFailed: (failure: ProjectionFailure) => void
}

/** How long after a worker died the next one starts. */
const RESTART_MS = 1_000

/**
 * The worker runs TypeScript as the node does, through tsx: a worker's `--import` loader is not
 * honoured on Node 20, so the worker's first code imports the entry with tsx's `tsImport`, from the
 * ESM build of its API (the CommonJS build registers a path that does not exist inside a worker).
 */
const tsxApi = pathToFileURL(createRequire(import.meta.url).resolve("tsx/esm/api").replace(/\.cjs$/, ".mjs")).href
const bootstrap = (entry: URL) =>
  `import(${JSON.stringify(tsxApi)}).then(({ tsImport }) => tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(entry.href)}))`

/**
 * Starts the worker (`entry`, given `workerData`), closed with the scope, and the runner that
 * projects in it. `appends`: the embedded log's in-process append signal, forwarded to the worker
 * (on Kafka nobody signals on it).
 */
export const spawn = (entry: URL, workerData: unknown, appends: EventEmitter): Effect.Effect<ProjectPartitions, never, Scope.Scope> =>
  Effect.gen(function* () {
    const runs = new Map<number, Run>()
    let nextRun = 0
    let closing = false
    let worker: Worker
    let restarting: ReturnType<typeof setTimeout> | undefined
    const post = (message: ToWorker) => worker.postMessage(message)
    const start = () => {
      worker = new Worker(bootstrap(entry), { eval: true, workerData })
      worker.on("message", (message: FromWorker) => {
        const run = runs.get(message.run)
        if (run === undefined) return
        if (message.type === "projected") run.onProjected(message.partition, message.next)
        else run.onFailed(message.failure)
      })
      worker.on("error", (error) => {
        for (const run of runs.values()) run.onFailed(failureOf(error))
      })
      worker.on("exit", () => {
        if (closing) return
        restarting = setTimeout(() => {
          start()
          for (const [run, { partitions }] of runs) post({ type: "project", run, partitions })
        }, RESTART_MS)
      })
    }
    start()
    yield* Effect.acquireRelease(
      Effect.sync(() => forwardAppends(appends, (channel, partition) => post({ type: "appended", channel, partition }))),
      (stop) => Effect.sync(stop)
    )
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => {
        closing = true
        clearTimeout(restarting)
        return worker.terminate()
      })
    )
    const runner: ProjectPartitions = (partitions, onProjected, onFailed) =>
      Effect.async<never>(() => {
        const run = nextRun++
        runs.set(run, { partitions, onProjected, onFailed })
        post({ type: "project", run, partitions })
        return Effect.sync(() => {
          runs.delete(run)
          if (!closing) post({ type: "stop", run })
        })
      })
    return runner
  })

/**
 * Tells `forward` each append signalled on `appends`, on every channel a log listens on (its
 * schema names it; a log opened later is heard too). Returns what stops it.
 */
const forwardAppends = (appends: EventEmitter, forward: (channel: string, partition: number) => void) => {
  const listeners = new Map<string, (partition: number) => void>()
  const listen = (channel: string | symbol) => {
    if (typeof channel !== "string" || channel === "newListener" || listeners.has(channel)) return
    const listener = (partition: number) => forward(channel, partition)
    listeners.set(channel, listener)
    appends.on(channel, listener)
  }
  for (const channel of appends.eventNames()) listen(channel)
  appends.on("newListener", listen)
  return () => {
    appends.off("newListener", listen)
    for (const [channel, listener] of listeners) appends.off(channel, listener)
  }
}

/**
 * The worker's side: runs what the node asks for on `runtime` (its own pool and log), posting each
 * commit back; `appends` is the worker's embedded log's signal, told the node's appends.
 */
export const serve = (
  port: MessagePort,
  db: DbService,
  kinds: KindRegistry,
  runtime: Runtime.Runtime<EventLog>,
  appends: EventEmitter
) => {
  const fork = Runtime.runFork(runtime)
  const runs = new Map<number, Fiber.RuntimeFiber<unknown, unknown>>()
  const reply = (message: FromWorker) => port.postMessage(message)
  port.on("message", (message: ToWorker) => {
    switch (message.type) {
      case "project":
        runs.set(
          message.run,
          fork(project(db, kinds, message.partitions, (partition, next) => reply({ type: "projected", run: message.run, partition, next }), (error) =>
            reply({ type: "failed", run: message.run, failure: failureOf(error) })))
        )
        return
      case "stop": {
        const fiber = runs.get(message.run)
        runs.delete(message.run)
        if (fiber !== undefined) fork(Fiber.interrupt(fiber))
        return
      }
      case "appended":
        appends.emit(message.channel, message.partition)
    }
  })
}
