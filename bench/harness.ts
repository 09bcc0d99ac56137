/**
 * What bench/auth.ts, bench/chat.ts and bench/a2a.ts share: the environment they read, the node
 * they start and clean up after, their child processes (a load generator and, for some, a ceiling
 * server: the bench file again, with the argument `load` or `ceiling`) and the messages between
 * them, the quantiles, and the Markdown they print.
 *
 * This module imports none of the platform's modules at its top (only inside the functions the
 * bench process alone calls), so that a child that imports it loads none of the platform.
 */
import { Effect, Exit, Scope } from "effect"
import { type ChildProcess, fork } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import http from "node:http"
import { cpus, tmpdir, totalmem } from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import uWS from "uWebSockets.js"

export const databaseUrl = process.env.DATABASE_URL || undefined
export const brokers = (process.env.KAFKA_BROKERS ?? "").split(",").filter((b) => b !== "")
export const PARTITIONS = Number(process.env.LOG_PARTITIONS ?? 12)
/** The database the node runs on, in a word. */
export const database = databaseUrl === undefined ? "PGlite" : "Postgres"

// ---------------------------------------------------------------------------------------------
// The bench process: a data directory, a scope for the node, the children; all cleaned up after.

export interface Bench {
  readonly dataDir: string
  readonly scope: Scope.CloseableScope
  /** Starts the bench file again as a child process with the argument `role`; it is killed when the bench ends. */
  readonly fork: (role: "load" | "ceiling") => ChildProcess
}

export interface Roles {
  /** The bench process: measures, prints. */
  readonly bench: (bench: Bench) => Promise<void>
  /** The load generator: its answer to each message of the bench process. */
  readonly load: (message: any) => Promise<unknown>
  /** The ceiling server, where there is one. */
  readonly ceiling?: () => void
}

/**
 * Runs the role of this process, by its argument: in a child, the load generator or the ceiling,
 * which stop once the bench process is gone (instead of writing to a closed channel); otherwise the
 * bench, after which (whether it succeeds or fails) its children are killed, its node is stopped and
 * its data directory removed, and the process exits, 1 on failure.
 */
export const runBench = (moduleUrl: string, roles: Roles) => {
  const role = process.argv[2]
  if (role === "load" || (role === "ceiling" && roles.ceiling !== undefined)) {
    process.on("disconnect", () => process.exit(1))
    if (role === "load") serve(roles.load)
    else roles.ceiling!()
    return
  }
  const main = async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "svc-bench-"))
    const scope = Effect.runSync(Scope.make())
    const children: ChildProcess[] = []
    const here = fileURLToPath(moduleUrl)
    const start = (role: "load" | "ceiling") => {
      const child = fork(here, [role], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
      children.push(child)
      return child
    }
    try {
      await roles.bench({ dataDir, scope, fork: start })
    } finally {
      for (const child of children) child.kill()
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await rm(dataDir, { recursive: true, force: true })
    }
  }
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(error)
      process.exit(1)
    }
  )
}

/**
 * One node in this process, in `bench`'s scope and data directory: embedded PGlite unless
 * DATABASE_URL is set (else a schema of its own), the embedded log unless KAFKA_BROKERS is set
 * (else topics of its own), LOG_PARTITIONS partitions; with `unlimitedChat`, the chat rate limit
 * raised out of the way (the limiter would refuse all but 120 turns a minute of the one workspace).
 */
export const startNode = async (bench: Bench, { unlimitedChat = false } = {}) => {
  const { loadConfig } = await import("../src/Config.ts")
  const Node = await import("../src/Node.ts")
  const name = `bench_${randomBytes(4).toString("hex")}`
  const base = loadConfig({})
  const config = {
    ...base,
    port: 0,
    host: "127.0.0.1",
    dataDir: bench.dataDir,
    databaseUrl,
    dbSchema: databaseUrl === undefined ? "public" : name,
    kafkaBrokers: brokers,
    topicPrefix: name,
    partitions: PARTITIONS,
    secureCookies: false,
    ...(unlimitedChat ? { assistant: { ...base.assistant, chatRateLimitPerMinute: 1_000_000_000 } } : {})
  }
  return Effect.runPromise(Scope.extend(Node.startNode(config), bench.scope))
}

export type BenchNode = Awaited<ReturnType<typeof startNode>>

/** Waits until the node's projection has folded everything appended to its log so far. */
export const settle = async (node: BenchNode) => {
  const { allPartitions } = await import("../streams/EventLog.ts")
  const { readCheckpoints } = await import("../streams/Projector.ts")
  const partitions = allPartitions(node.log.partitions)
  const ends = await Effect.runPromise(node.log.endOffsets(partitions))
  for (;;) {
    const applied = await Effect.runPromise(readCheckpoints(node.db, partitions))
    if (partitions.every((p) => applied.get(p)! >= ends.get(p)!)) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** A line on stderr, so that a long run shows where it is: `name`, the seconds since this call, `what`. */
export const progressOf = (name: string) => {
  const started = performance.now()
  return (what: string) => console.error(`${name} ${((performance.now() - started) / 1000).toFixed(1)} s: ${what}`)
}

// ---------------------------------------------------------------------------------------------
// The children and the messages between them and the bench process.

/** In a child: answers each message of the bench process with what `handle` makes of it; a failure ends the child. */
export const serve = (handle: (message: any) => Promise<unknown>) => {
  process.on("message", (message) => {
    handle(message).then(
      (reply) => process.send!(reply as object),
      (error) => {
        console.error(error)
        process.exit(1)
      }
    )
  })
}

/** Listens on a free port of 127.0.0.1; `what` names the app when it cannot. */
export const listen = (app: uWS.TemplatedApp, what: string) =>
  new Promise<{ port: number; close: () => void }>((resolve, reject) =>
    app.listen("127.0.0.1", 0, (socket) => {
      if (!socket) return reject(new Error(`${what} cannot listen`))
      resolve({ port: uWS.us_socket_local_port(socket), close: () => uWS.us_listen_socket_close(socket) })
    })
  )

/** In the ceiling child: listens with `app`, answers the bench process with `handle`, and tells it the port. */
export const serveCeiling = (app: uWS.TemplatedApp, handle: (message: any) => Promise<unknown>) =>
  listen(app, "the ceiling app").then(
    ({ port }) => {
      serve(handle)
      process.send!({ kind: "port", port })
    },
    (error: Error) => {
      console.error(error.message)
      process.exit(1)
    }
  )

/** Sends `message` (none if undefined) to `child` and resolves with its next message that `accept` takes. */
export const ask = <A>(child: ChildProcess, message: unknown, accept: (reply: any) => reply is A = (_): _ is A => true) =>
  new Promise<A>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`a bench child exited with ${code}`))
    const onMessage = (reply: unknown) => {
      if (!accept(reply)) return
      child.off("exit", onExit)
      child.off("message", onMessage)
      resolve(reply)
    }
    child.once("exit", onExit)
    child.on("message", onMessage)
    if (message !== undefined) child.send(message as object)
  })

export const kindIs =
  <A>(kind: string) =>
  (m: any): m is A =>
    m?.kind === kind

/** The port the ceiling child listens on. */
export const portOf = async (ceiling: ChildProcess) => (await ask<{ port: number }>(ceiling, undefined, kindIs("port"))).port

// ---------------------------------------------------------------------------------------------
// The load generators' requests: node:http, one socket per request in flight.

let agent: http.Agent | undefined

/** Where a load generator sends its requests, and the Bearer key it sends. */
export interface Target {
  readonly port: number
  readonly path: string
  readonly key: string
}

/**
 * POSTs `body` (JSON) to `target` over an agent without a socket limit. `read` reads the response
 * and ends the request with `end`, a failure or none; an error of the request, or no end within
 * `timeoutMs` (then `timeout` is the failure), ends it too. `ended` hears the end, once.
 */
export const post = (
  target: Target,
  body: string,
  timeoutMs: number,
  timeout: string,
  read: (response: http.IncomingMessage, end: (failure?: string) => void) => void,
  ended: (failure?: string) => void
) => {
  agent ??= new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 4096 })
  let settled = false
  const end = (failure?: string) => {
    if (settled) return
    settled = true
    clearTimeout(timer)
    ended(failure)
  }
  const request = http.request(
    {
      host: "127.0.0.1",
      port: target.port,
      path: target.path,
      method: "POST",
      agent,
      headers: { authorization: `Bearer ${target.key}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) }
    },
    (response) => read(response, end)
  )
  const timer = setTimeout(() => {
    end(timeout)
    request.destroy()
  }, timeoutMs)
  request.on("error", (error: NodeJS.ErrnoException) => end(error.code ?? error.message))
  request.end(body)
}

// ---------------------------------------------------------------------------------------------
// Figures.

/** `values` sorted, ascending. */
export const ascending = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)

/** The `q` quantile of `sorted` (ascending): the value at ⌊q·n⌋; NaN when there is none. */
export const quantile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

/** Milliseconds of CPU time (user and system) between two readings of `process.cpuUsage()`, per one of `count`. */
export const cpuMsPer = (before: NodeJS.CpuUsage, after: NodeJS.CpuUsage, count: number) =>
  (after.user - before.user + after.system - before.system) / 1000 / count

/** Failures counted by message: `n × message`, in the order of their first occurrence. */
export const tally = (failures: Iterable<string>) => {
  const counts = new Map<string, number>()
  for (const failure of failures) counts.set(failure, (counts.get(failure) ?? 0) + 1)
  return [...counts].map(([failure, n]) => `${n} × ${failure}`)
}

// ---------------------------------------------------------------------------------------------
// Markdown.

/** The head of the output: the machine, Node, the database and the log (`logMode`); the bench adds the rest. */
export const machine = (logMode: string) =>
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}; ` +
  `Postgres ${databaseUrl === undefined ? "embedded (PGlite)" : `at ${new URL(databaseUrl).host}`}; log ${logMode}`

/** The platform's row label, beside the ceiling's. */
export const platformLabel = (logMode: string) => `platform (${database}, ${logMode} log)`

/** A row of a Markdown table. */
export const row = (cells: ReadonlyArray<string | number>) => `| ${cells.join(" | ")} |`

/** A Markdown table: its column names, each column's alignment (`l` or `r`, one letter a column), its rows. */
export const table = (columns: ReadonlyArray<string>, align: string, rows: ReadonlyArray<string>) => [
  row(columns),
  `|${[...align].map((a) => (a === "r" ? "---:" : "---")).join("|")}|`,
  ...rows
]
