/**
 * `npm run bench:auth`: what the checkpoint costs. Requests per second, and p50/p99 latency, of
 * `POST /v1/{org}/{workspace}/system/ping` through the full checkpoint (authenticate, scope, role,
 * validate, run, audit) with the bootstrap workspace key, against the same route shape served with
 * no checkpoint at all: a bench-only uWS app, in this process, that routes with the same `route()`
 * helper, decodes the same body, runs the same handler on the node's runtime and answers through
 * the same error table. The ratio of the two is the cost of the checkpoint. Writes a Markdown table
 * to stdout.
 *
 * One node runs in this process: embedded PGlite unless DATABASE_URL is set, the embedded log
 * unless KAFKA_BROKERS is set. The load comes from a child process (this file again, with the
 * argument `load`): BENCH_CONNECTIONS keep-alive connections, each sending its next request as soon
 * as the last answer is in. After BENCH_WARMUP_SECONDS of warm-up on each route, the routes take
 * turns, BENCH_ROUNDS rounds of BENCH_SECONDS each, so that a change in the machine's other load
 * falls on both alike; the figures are over all rounds, and the ratio's range over the rounds is
 * shown beside it. Both routes receive byte-identical requests, Authorization header included; the
 * baseline ignores it. Before each round the projection catches up with the log, so one route's
 * audit backlog is not folded during the other's turn.
 */
import { Effect, Exit, Runtime, Schema, Scope } from "effect"
import { type ChildProcess, fork } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { connect } from "node:net"
import { cpus, tmpdir, totalmem } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import uWS from "uWebSockets.js"
import { replyForExit } from "../gateway/errors.ts"
import { type HttpRequest, jsonBody, jsonError, route } from "../gateway/http.ts"
import { registry } from "../src/App.ts"
import type { Invocation } from "../src/Capabilities.ts"
import { loadConfig } from "../src/Config.ts"
import { startNode } from "../src/Node.ts"
import { allPartitions } from "../streams/EventLog.ts"
import { readCheckpoints } from "../streams/Projector.ts"

const databaseUrl = process.env.DATABASE_URL || undefined
const brokers = (process.env.KAFKA_BROKERS ?? "").split(",").filter((b) => b !== "")
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)
const PARTITIONS = Number(process.env.LOG_PARTITIONS ?? 12)
const CAPABILITY = "system.ping"

// ---------------------------------------------------------------------------------------------
// The load generator (child process): raw keep-alive HTTP/1.1, one request in flight per connection.

interface Load {
  readonly port: number
  readonly request: string
  readonly connections: number
  readonly seconds: number
}

interface LoadResult {
  readonly failures: number
  readonly seconds: number
  /** Milliseconds from each request's first byte written to its response's last byte read. */
  readonly latencies: ReadonlyArray<number>
}

const CONTENT_LENGTH = /\r\ncontent-length: *(\d+)/i

const generateLoad = async ({ port, request, connections, seconds }: Load): Promise<LoadResult> => {
  const bytes = Buffer.from(request, "latin1")
  const latencies: number[] = []
  let failures = 0
  const started = performance.now()
  const deadline = started + seconds * 1000
  const connection = () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1")
      socket.setNoDelay(true)
      let buffered: Buffer = Buffer.alloc(0)
      let sentAt = 0
      const send = () => {
        sentAt = performance.now()
        socket.write(bytes)
      }
      socket.on("connect", send)
      socket.on("error", reject)
      socket.on("data", (chunk: Buffer) => {
        buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk])
        for (;;) {
          const headEnd = buffered.indexOf("\r\n\r\n")
          if (headEnd === -1) return
          const head = buffered.toString("latin1", 0, headEnd)
          const end = headEnd + 4 + Number(CONTENT_LENGTH.exec(head)?.[1] ?? 0)
          if (buffered.length < end) return
          buffered = buffered.subarray(end)
          const now = performance.now()
          latencies.push(now - sentAt)
          const status = Number(head.slice(9, 12))
          if (status < 200 || status > 299) failures++
          if (now >= deadline) {
            socket.end()
            return resolve()
          }
          send()
        }
      })
    })
  await Promise.all(Array.from({ length: connections }, connection))
  return { failures, seconds: (performance.now() - started) / 1000, latencies }
}

if (process.argv[2] === "load") {
  process.on("message", (load: Load) => {
    generateLoad(load).then(
      (result) => process.send!(result),
      (error) => {
        console.error(error)
        process.exit(1)
      }
    )
  })
}

/** Runs one load in the child and returns what it measured. */
const measure = (child: ChildProcess, load: Load) =>
  new Promise<LoadResult>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`load generator exited with ${code}`))
    child.once("exit", onExit)
    child.once("message", (result) => {
      child.off("exit", onExit)
      resolve(result as LoadResult)
    })
    child.send(load)
  })

// ---------------------------------------------------------------------------------------------
// The bench (this process): a node, the baseline app beside it, then the loads.

const WORKSPACE_ROUTE = /^\/v1\/([^/]+)\/([^/]+)\/(.+)$/

/** What the baseline hands the handler in place of the checkpoint's invocation. */
const anonymous = (capability: string, orgId: string, workspaceId: string): Invocation => {
  const at = new Date(0).toISOString()
  return {
    invocationId: "inv_bench",
    capability,
    surface: "api",
    principal: {
      credential: "api_key",
      apiKeyId: null,
      sessionId: null,
      orgId,
      workspaceId,
      userId: null,
      attributedTo: "bench",
      customRole: null,
      machineId: null,
      purpose: null,
      sso: null
    },
    roles: [],
    orgId,
    workspaceId,
    at,
    meta: { commandId: "cmd_bench", at, actor: "system" },
    newId: (prefix) => `${prefix}_bench`
  }
}

/**
 * The same route shape as the gateway's capability routes, with no checkpoint: route by the
 * registry, read the JSON body, decode the input, run the handler, encode the output.
 */
const startBaseline = (run: <A, E>(effect: Effect.Effect<A, E, never>) => Promise<Exit.Exit<A, E>>, orgId: string, workspaceId: string) => {
  const app = uWS.App()
  route(app, "post", "/v1/*", async (req: HttpRequest) => {
    const match = WORKSPACE_ROUTE.exec(req.url)
    const name = match === null ? undefined : registry.placeRoutes.get(`post ${match[3]}`)
    const capability = name === undefined ? undefined : registry.byName.get(name)
    if (capability === undefined) return jsonError(404, "not_found", `no route ${req.method} ${req.url}`, "route_not_found")
    const invocation = anonymous(capability.name, orgId, workspaceId)
    const exit = await run(
      Effect.gen(function* () {
        const raw = yield* jsonBody(req)
        const input = yield* Schema.decodeUnknown(capability.input, { onExcessProperty: "error" })(raw)
        const output = yield* capability.handler(invocation, input) as Effect.Effect<unknown, unknown, never>
        return yield* Schema.encode(capability.output)(output)
      })
    )
    return replyForExit(exit)
  })
  return new Promise<{ port: number; close: () => void }>((resolve, reject) =>
    app.listen("127.0.0.1", 0, (socket) => {
      if (!socket) return reject(new Error("the baseline app cannot listen"))
      resolve({ port: uWS.us_socket_local_port(socket), close: () => uWS.us_listen_socket_close(socket) })
    })
  )
}

const requestFor = (port: number, pathname: string, key: string) => {
  const body = "{}"
  return [
    `POST ${pathname} HTTP/1.1`,
    `host: 127.0.0.1:${port}`,
    `authorization: Bearer ${key}`,
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    "",
    body
  ].join("\r\n")
}

/** Runs the node in `scope`, its data in `dataDir`, and prints the table. */
const bench = async (dataDir: string, scope: Scope.CloseableScope) => {
  const name = `bench_${randomBytes(4).toString("hex")}`
  const config = {
    ...loadConfig({}),
    port: 0,
    host: "127.0.0.1",
    dataDir,
    databaseUrl,
    dbSchema: databaseUrl === undefined ? "public" : name,
    kafkaBrokers: brokers,
    topicPrefix: name,
    partitions: PARTITIONS,
    secureCookies: false
  }
  const node = await Effect.runPromise(Scope.extend(startNode(config), scope))
  const run = Runtime.runPromiseExit(node.runtime)
  const { orgSlug, workspaceSlug, workspaceKey } = node.bootstrap
  const place = await fetch(`http://127.0.0.1:${node.port}/v1/auth/whoami`, { headers: { authorization: `Bearer ${workspaceKey}` } })
  const { orgId, workspaceId } = (await place.json()) as { orgId: string; workspaceId: string }
  const baseline = await startBaseline(run, orgId, workspaceId)
  const pathname = `/v1/${encodeURIComponent(orgSlug)}/${encodeURIComponent(workspaceSlug)}/${CAPABILITY.replaceAll(".", "/")}`

  // both routes answer the same before anything is measured
  for (const port of [baseline.port, node.port]) {
    const reply = await fetch(`http://127.0.0.1:${port}${pathname}`, { method: "POST", headers: { authorization: `Bearer ${workspaceKey}` }, body: "{}" })
    const text = await reply.text()
    if (reply.status !== 200 || text !== '{"pong":true}') throw new Error(`port ${port} answered ${reply.status} ${text}`)
  }

  /** Waits until the projection has folded everything appended so far (the audit events of the last load). */
  const settle = async () => {
    const partitions = allPartitions(node.log.partitions)
    const ends = await Effect.runPromise(node.log.endOffsets(partitions))
    for (;;) {
      const applied = await Effect.runPromise(readCheckpoints(node.db, partitions))
      if (partitions.every((p) => applied.get(p)! >= ends.get(p)!)) return
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  const child = fork(fileURLToPath(import.meta.url), ["load"], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const load = async (port: number, seconds: number) => {
    await settle()
    const result = await measure(child, { port, request: requestFor(port, pathname, workspaceKey), connections: CONNECTIONS, seconds })
    if (result.failures > 0) throw new Error(`${result.failures} of ${result.latencies.length} requests to port ${port} failed`)
    return result
  }
  try {
    await load(baseline.port, WARMUP_SECONDS)
    await load(node.port, WARMUP_SECONDS)
    const open: LoadResult[] = []
    const checked: LoadResult[] = []
    for (let round = 0; round < ROUNDS; round++) {
      open.push(await load(baseline.port, SECONDS))
      checked.push(await load(node.port, SECONDS))
    }
    const rate = (rs: ReadonlyArray<LoadResult>) => rs.reduce((n, r) => n + r.latencies.length, 0) / rs.reduce((t, r) => t + r.seconds, 0)
    const row = (what: string, rs: ReadonlyArray<LoadResult>) => {
      const latencies = rs.flatMap((r) => r.latencies).sort((a, b) => a - b)
      const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(2)
      return `| ${what} | ${Math.round(rate(rs))} | ${at(0.5)} | ${at(0.99)} |`
    }
    const ratios = checked.map((r, i) => rate([r]) / rate([open[i]]))
    console.log([
      `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}; ` +
        `Postgres ${databaseUrl === undefined ? "embedded (PGlite)" : `at ${new URL(databaseUrl).host}`}; log ${node.log.mode}; ` +
        `${CONNECTIONS} connections; ${ROUNDS} rounds of ${SECONDS} s per route.`,
      "",
      "| route | requests/s | p50 ms | p99 ms |",
      "|---|---:|---:|---:|",
      row(`${pathname}, no checkpoint (bench-only app)`, open),
      row(`${pathname}, through the checkpoint`, checked),
      "",
      `Ratio (checkpoint ÷ no checkpoint): ${(rate(checked) / rate(open)).toFixed(2)} ` +
        `(rounds: ${Math.min(...ratios).toFixed(2)} – ${Math.max(...ratios).toFixed(2)})`
    ].join("\n"))
  } finally {
    child.kill()
    baseline.close()
  }
}

const main = async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), "svc-bench-"))
  const scope = Effect.runSync(Scope.make())
  try {
    await bench(dataDir, scope)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await rm(dataDir, { recursive: true, force: true })
  }
}

if (process.argv[2] !== "load") {
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(error)
      process.exit(1)
    }
  )
}
