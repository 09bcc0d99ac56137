/**
 * What the benches (bench/*.ts) share: the environment they read, the node they start and clean up
 * after, their child processes (a load generator and, for some, servers measured beside the
 * platform, a ceiling or a peer: the bench file again, with the argument `load` or the server's
 * name) and the messages between them, the load generator's windows of requests, the serving
 * processes' CPU and event-loop time, the quantiles, and the Markdown they print.
 *
 * This module imports none of the platform's modules at its top (only inside the functions the
 * bench process alone calls), so that a child that imports it loads none of the platform.
 */
import { Effect, Exit, Scope } from "effect"
import { type ChildProcess, fork } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { cpus, tmpdir, totalmem } from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import type { AppConfig } from "../src/platform/Config.ts"
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
  readonly fork: (role: string) => ChildProcess
}

export interface Roles {
  /** The bench process: measures, prints. */
  readonly bench: (bench: Bench) => Promise<void>
  /** The load generator: its answer to each message of the bench process. */
  readonly load: (message: any) => Promise<unknown>
  /** The servers measured beside the platform (a ceiling, peers), each started by the argument of its name. */
  readonly servers?: Readonly<Record<string, () => void>>
}

/**
 * Runs the role of this process, by its argument: in a child, the load generator or a server,
 * which stop once the bench process is gone (instead of writing to a closed channel); otherwise the
 * bench, after which (whether it succeeds or fails) its children are killed, its node is stopped and
 * its data directory removed, and the process exits, 1 on failure.
 */
export const runBench = (moduleUrl: string, roles: Roles) => {
  const role = process.argv[2]
  const server = role === undefined || role === "load" ? undefined : roles.servers?.[role]
  if (role === "load" || server !== undefined) {
    process.on("disconnect", () => process.exit(1))
    if (server === undefined) serve(roles.load)
    else server()
    return
  }
  const main = async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "svc-bench-"))
    const scope = Effect.runSync(Scope.make())
    const children: ChildProcess[] = []
    const here = fileURLToPath(moduleUrl)
    const start = (role: string) => {
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
 * (else topics of its own), LOG_PARTITIONS partitions; with `unlimitedChat`, the chat rate limit,
 * the fair shares of streams and turns, and the node's admission bounds raised out of the way (the
 * limiter would refuse all but 120 turns a minute of the one workspace, its one key may hold 32
 * streams at once, and the node starts 200 turns at a time).
 */
export const startNode = async (bench: Bench, { unlimitedChat = false, overrides = {} }: { unlimitedChat?: boolean; overrides?: Partial<AppConfig> } = {}) => {
  const { loadConfig } = await import("../src/platform/Config.ts")
  const Node = await import("../bin/node.ts")
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
    // PROJECTION_WORKER=true measures the projection in a worker thread (real Postgres only)
    projectionWorker: process.env.PROJECTION_WORKER === "true",
    // a line per request would bury the bench's tables; LOG_LEVEL=info measures with them
    logging: loadConfig({ LOG_LEVEL: process.env.LOG_LEVEL ?? "warn", LOG_FORMAT: process.env.LOG_FORMAT }).logging,
    ...(unlimitedChat
      ? {
          // the key budget stays in the way at its default slice (an actor command each 100 sends): its cost is part of what is measured
          assistant: { ...base.assistant, chatRateLimitPerMinute: 1_000_000_000, keyRateLimitPerMinute: 1_000_000_000 },
          fairShares: { ...base.fairShares, streamsPerKey: 1_000_000_000, streamsPerWorkspace: 1_000_000_000, turnsPerKey: 1_000_000_000, turnsPerWorkspace: 1_000_000_000 },
          // the benches measure what the node holds when it takes everything; admission has its own tests
          admission: { maxTurnsStarting: 1_000_000_000, maxTurnsRunning: 1_000_000_000, maxOpenStreams: 1_000_000_000, maxQueuedCommands: 1_000_000_000 }
        }
      : {}),
    ...overrides
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

/** Listens with `server` on a free port of 127.0.0.1; resolves with the port. */
export const listenHttp = (server: http.Server) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  })

/**
 * In a server child: once it listens on `port`, answers the bench process with `handle` and tells
 * it the port; if it cannot listen, the child ends.
 */
export const announce = (port: Promise<number>, handle: (message: any) => Promise<unknown>) =>
  port.then(
    (port) => {
      serve(handle)
      process.send!({ kind: "port", port })
    },
    (error: Error) => {
      console.error(error.message)
      process.exit(1)
    }
  )

/** In the ceiling child: listens with `app`, answers the bench process with `handle`, and tells it the port. */
export const serveCeiling = (app: uWS.TemplatedApp, handle: (message: any) => Promise<unknown>) =>
  announce(
    listen(app, "the ceiling app").then(({ port }) => port),
    handle
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

/** The port a server child listens on. */
export const portOf = async (server: ChildProcess) => (await ask<{ port: number }>(server, undefined, kindIs("port"))).port

// ---------------------------------------------------------------------------------------------
// The load generators' requests: node:http, one socket per request in flight.

let agent: http.Agent | undefined

/** Where a load generator sends its requests, and the Bearer key it sends. */
export interface Target {
  readonly port: number
  readonly path: string
  readonly key: string
  /** More request headers, such as the protocol version a server is asked to speak. */
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * POSTs `body` (JSON) to `target` over an agent without a socket limit; a null body is a GET.
 * `read` reads the response and ends the request with `end`, a failure or none; an error of the
 * request, or no end within `timeoutMs` (then `timeout` is the failure), ends it too. `ended`
 * hears the end, once.
 */
export const post = (
  target: Target,
  body: string | null,
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
      method: body === null ? "GET" : "POST",
      agent,
      headers: {
        ...target.headers,
        authorization: `Bearer ${target.key}`,
        ...(body === null ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      }
    },
    (response) => read(response, end)
  )
  const timer = setTimeout(() => {
    end(timeout)
    request.destroy()
  }, timeoutMs)
  request.on("error", (error: NodeJS.ErrnoException) => end(error.code ?? error.message))
  request.end(body ?? undefined)
}

/**
 * POSTs `body` (JSON) to `target` (a null body: GETs it) and reads the whole answer; resolves with
 * the failure `check` finds in its status and text, or with none; a failure of the request, or no
 * answer within `timeoutMs`, is a failure too.
 */
export const postForText = (target: Target, body: string | null, timeoutMs: number, check: (status: number, text: string) => string | undefined) =>
  new Promise<string | undefined>((resolve) =>
    post(
      target,
      body,
      timeoutMs,
      `no answer within ${timeoutMs} ms`,
      (response, end) => {
        const chunks: Buffer[] = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("error", (error) => end(error.message))
        response.on("end", () => end(check(response.statusCode ?? 0, Buffer.concat(chunks).toString("utf8"))))
      },
      resolve
    )
  )

/** What a load generator measured over one window of requests. */
export interface Window {
  readonly kind: "window"
  /** Milliseconds from each request's start to its answer's last byte, every answer. */
  readonly latencies: ReadonlyArray<number>
  /** From the first request to the last answer. */
  readonly seconds: number
  /** How long the requests in flight at the window's end took to finish. */
  readonly drainSeconds: number
  /** The load generator's own event-loop utilization over the window. */
  readonly clientBusy: number
  readonly failures: ReadonlyArray<string>
}

/**
 * In a load generator: `concurrency` requests in flight for `seconds`, each sending its next as soon
 * as its answer is in, none after the window; `request` resolves with its failure, or none.
 */
export const loadWindow = async (concurrency: number, seconds: number, request: () => Promise<string | undefined>): Promise<Window> => {
  const latencies: number[] = []
  const failures: string[] = []
  const loopBefore = performance.eventLoopUtilization()
  const started = performance.now()
  const deadline = started + seconds * 1000
  const worker = async () => {
    while (performance.now() < deadline) {
      const sent = performance.now()
      const failure = await request()
      latencies.push(performance.now() - sent)
      if (failure !== undefined) failures.push(failure)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  const ended = performance.now()
  return {
    kind: "window",
    latencies,
    seconds: (ended - started) / 1000,
    drainSeconds: Math.max(0, ended - deadline) / 1000,
    clientBusy: performance.eventLoopUtilization(loopBefore).utilization,
    failures: tally(failures)
  }
}

// ---------------------------------------------------------------------------------------------
// The serving processes' CPU and event-loop time, and a window's figures.

/** What the bench reads of a serving process: CPU time of all its threads, and its event loop's time. */
export interface Usage {
  readonly cpu: NodeJS.CpuUsage
  readonly loop: { readonly idle: number; readonly active: number }
}

export const usageNow = (): Usage => {
  const { idle, active } = performance.eventLoopUtilization()
  return { cpu: process.cpuUsage(), loop: { idle, active } }
}

/** In a server child: the answer to the bench process's `{ kind: "usage" }`. */
export const usageReply = () => ({ kind: "usage", usage: usageNow() })

/** A server child's usage now. */
export const usageOf = (server: ChildProcess) => ask<{ usage: Usage }>(server, { kind: "usage" }, kindIs("usage")).then((m) => m.usage)

/** A window with the serving process's usage over it; `what` names it when a request failed. */
export const measured = (what: string, window: Window, before: Usage, after: Usage) => {
  if (window.failures.length > 0) throw new Error(`${what}: ${window.failures.join("; ")}`)
  const active = after.loop.active - before.loop.active
  return {
    ...window,
    rate: window.latencies.length / window.seconds,
    sorted: ascending(window.latencies),
    /** CPU milliseconds of the serving process (all threads) per answer. */
    cpuMs: cpuMsPer(before.cpu, after.cpu, window.latencies.length),
    /** The serving process's event-loop utilization. */
    busy: active / (active + after.loop.idle - before.loop.idle)
  }
}

export type Measured = ReturnType<typeof measured>

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

/** `a ÷ b`, with two significant decimals below 10 (four below 0.1). */
export const ratio = (a: number, b: number) => {
  const x = a / b
  return x >= 10 ? x.toFixed(0) : x >= 0.1 ? x.toFixed(2) : x.toFixed(4)
}

/** The ratios of two windows (`a ÷ b`): requests/s, p50, p99, CPU per request. */
export const ratios = (a: Measured, b: Measured) =>
  `requests/s ${ratio(a.rate, b.rate)}, p50 ${ratio(quantile(a.sorted, 0.5), quantile(b.sorted, 0.5))}, ` +
  `p99 ${ratio(quantile(a.sorted, 0.99), quantile(b.sorted, 0.99))}, CPU per request ${ratio(a.cpuMs, b.cpuMs)}`

/** A count or rate, rounded, with thousands separators. */
export const int = (n: number) => Math.round(n).toLocaleString("en-US")

/** Milliseconds, one decimal below 100. */
export const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1))

/** The columns of `windowCells`, and their alignment. */
export const WINDOW_COLUMNS = ["answers", "s", "requests/s", "p50 ms", "p99 ms", "CPU ms per request", "server busy", "client busy"]
export const WINDOW_ALIGN = "rrrrrrrr"

/** A window's cells in a table row. */
export const windowCells = (r: Measured) => [
  int(r.latencies.length),
  r.seconds.toFixed(1),
  int(r.rate),
  ms(quantile(r.sorted, 0.5)),
  ms(quantile(r.sorted, 0.99)),
  r.cpuMs.toFixed(r.cpuMs >= 10 ? 1 : 3),
  `${(100 * r.busy).toFixed(0)} %`,
  `${(100 * r.clientBusy).toFixed(0)} %`
]

/** What the columns of `windowCells` mean, for the line above the table. */
export const WINDOW_LEGEND =
  "s: from the first request to the last answer, the answers in flight at the window's end included; latency in ms; " +
  "CPU: the serving process's, all threads, per request; busy: the event-loop utilization of the serving process and of the load generator"

const VOCABULARY = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]

/**
 * The built-in offline model's answer to `content` (src/assistant/models/offline.ts: `/slow` and
 * `/long` understood, else `You said: <content>`), in its chunks of three words, and its wait
 * between them; and the reasoning it opens with.
 */
export const offlineAnswer = (content: string) => {
  let slowMs = 0
  let long: number | undefined
  const lines: string[] = []
  for (const line of content.split("\n")) {
    const directive = /^\/(slow|long)\s+(\d+)$/.exec(line.trim())
    if (directive === null) lines.push(line)
    else if (directive[1] === "slow") slowMs = Number(directive[2])
    else long = Number(directive[2])
  }
  const text = long === undefined ? `You said: ${lines.join("\n").trim()}` : Array.from({ length: long }, (_, i) => VOCABULARY[i % VOCABULARY.length]).join(" ")
  const words = text.split(/(?<=\s)/)
  const chunks: string[] = []
  for (let i = 0; i < words.length; i += 3) chunks.push(words.slice(i, i + 3).join(""))
  return { reasoning: "Reading the message.", chunks, slowMs }
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

/** The knobs of a bench that loads servers in windows: BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_CONCURRENCY. */
export const windowSettings = (concurrency: number) => ({
  seconds: Number(process.env.BENCH_SECONDS ?? 10),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 3),
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? concurrency),
  /** A request gives up after this long. */
  requestTimeoutMs: 60_000
})

