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
 * audit backlog is not folded during the other's turn. The CPU column is this process's CPU time
 * (`process.cpuUsage()`, all threads: the node, its projection, the baseline app) per request of
 * the route's rounds. With `BENCH_PROFILE=1` each route's last round is CPU-profiled (the V8
 * sampling profiler through `node:inspector`, which slows it down) and the top costs by self time
 * are printed after the table.
 */
import { Effect, type Exit, Runtime, Schema } from "effect"
import { connect } from "node:net"
import uWS from "uWebSockets.js"
import { replyForExit } from "../gateway/errors.ts"
import { type HttpRequest, jsonBody, jsonError, route } from "../gateway/http.ts"
import { registry } from "../bin/App.ts"
import type { Invocation } from "../src/checkpoint/Capability.ts"
import { ascending, ask, type Bench, listen, machine, quantile, row, runBench, settle, startNode, table } from "./harness.ts"
import { openProfiler, profileTables } from "./profile.ts"

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)
const CAPABILITY = "system.ping"
const PROFILE = process.env.BENCH_PROFILE !== undefined && process.env.BENCH_PROFILE !== ""

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
    newId: (prefix) => `${prefix}_bench`,
    clientAddress: null
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
  return listen(app, "the baseline app")
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

/** Runs the node, the baseline and the load generator, and prints the table. */
const bench = async (context: Bench) => {
  const node = await startNode(context)
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

  const child = context.fork("load")
  const profiler = PROFILE ? await openProfiler() : undefined
  const profiles: string[] = []
  const load = async (port: number, seconds: number, profiled?: string) => {
    // the projection folds the audit events of the last load first
    await settle(node)
    if (profiled !== undefined) await profiler?.start()
    const cpu = process.cpuUsage()
    const result = await ask<LoadResult>(child, { port, request: requestFor(port, pathname, workspaceKey), connections: CONNECTIONS, seconds } satisfies Load)
    const { user, system } = process.cpuUsage(cpu)
    if (profiled !== undefined && profiler !== undefined) profiles.push("", ...profileTables(profiled, await profiler.stop()))
    if (result.failures > 0) throw new Error(`${result.failures} of ${result.latencies.length} requests to port ${port} failed`)
    return { ...result, cpuMicros: user + system }
  }
  try {
    await load(baseline.port, WARMUP_SECONDS)
    await load(node.port, WARMUP_SECONDS)
    type Round = LoadResult & { readonly cpuMicros: number }
    const open: Round[] = []
    const checked: Round[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const last = round === ROUNDS - 1
      open.push(await load(baseline.port, SECONDS, last ? "the route with no checkpoint" : undefined))
      checked.push(await load(node.port, SECONDS, last ? "the route through the checkpoint" : undefined))
    }
    const rate = (rs: ReadonlyArray<LoadResult>) => rs.reduce((n, r) => n + r.latencies.length, 0) / rs.reduce((t, r) => t + r.seconds, 0)
    const routeRow = (what: string, rs: ReadonlyArray<Round>) => {
      const latencies = ascending(rs.flatMap((r) => r.latencies))
      const cpuPerRequest = rs.reduce((t, r) => t + r.cpuMicros, 0) / latencies.length
      return row([what, Math.round(rate(rs)), quantile(latencies, 0.5).toFixed(2), quantile(latencies, 0.99).toFixed(2), Math.round(cpuPerRequest)])
    }
    const ratios = checked.map((r, i) => rate([r]) / rate([open[i]]))
    console.log([
      `${machine(node.log.mode)}; ${CONNECTIONS} connections; ${ROUNDS} rounds of ${SECONDS} s per route` +
        `${PROFILE ? "; the last round of each route CPU-profiled (slower)" : ""}.`,
      "",
      ...table(["route", "requests/s", "p50 ms", "p99 ms", "CPU µs per request"], "lrrrr", [
        routeRow(`${pathname}, no checkpoint (bench-only app)`, open),
        routeRow(`${pathname}, through the checkpoint`, checked)
      ]),
      "",
      `Ratio (checkpoint ÷ no checkpoint): ${(rate(checked) / rate(open)).toFixed(2)} ` +
        `(rounds: ${Math.min(...ratios).toFixed(2)} – ${Math.max(...ratios).toFixed(2)})`,
      ...profiles
    ].join("\n"))
  } finally {
    profiler?.close()
    baseline.close()
  }
}

runBench(import.meta.url, { bench, load: generateLoad })
