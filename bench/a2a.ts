/**
 * `npm run bench:a2a`: what the A2A endpoint serves, with the built-in offline model (no provider).
 * JSON-RPC 2.0 on `POST /a2a` with the bootstrap workspace key as Bearer, two methods:
 *
 * 1. `message/send`, content `hello`, a new `messageId` (UUID) per request and no task or context
 *    id, so every request is a new task: a whole assistant turn in a new conversation, answered
 *    once the task has settled (the default, blocking). Each answer must be the Task, `completed`.
 * 2. `tasks/get` of one existing task (the completed task of a `message/send` made before the
 *    loads): a read through the checkpoint (`invoke` → `findTask` → `taskView`).
 *
 * Each method runs for BENCH_SECONDS with BENCH_CONCURRENCY requests in flight (each sends its next
 * as soon as its answer is in; none is sent after the window), after BENCH_WARMUP_SECONDS of
 * warm-up. Requests per second: every answer ÷ the time from the first request to the last answer
 * (as in bench/auth.ts); p50/p99 latency: request start to the answer's last byte. Also the serving
 * process's CPU time per request (`process.cpuUsage()`, all its threads: with PGlite, the
 * database's too; a real Postgres's is not counted), and the event-loop utilization of the serving
 * process's main thread and of the load generator (near 100 %: the client limits the figure).
 *
 * Ceiling: the same requests, byte for byte, to a bare uWebSockets.js JSON-RPC route in a child
 * process (this file again, argument `ceiling`): it reads the body, parses it, and answers
 * `{jsonrpc, id, result}` with a fixed Task (the platform's own answer to the first `tasks/get`, so
 * that both write the same bytes but the id). Platform ÷ ceiling ratios close the output.
 *
 * One node runs in this process, as in bench/chat.ts: embedded PGlite unless DATABASE_URL is set,
 * the embedded log unless KAFKA_BROKERS is set, the chat rate limit raised out of the way. The load
 * comes from another child process (argument `load`), over `node:http` with an agent without a
 * socket limit, one socket per request in flight. Neither child loads the platform's modules.
 * With BENCH_PROFILE=<directory>, the platform's two windows are CPU-profiled (the V8 sampling
 * profiler through `node:inspector`, which slows the node down) into `a2a-send.cpuprofile` and
 * `a2a-get.cpuprofile` there, and their top costs are printed after the tables.
 * Writes Markdown tables to stdout.
 */
import { randomUUID } from "node:crypto"
import { mkdir, writeFile } from "node:fs/promises"
import { Session } from "node:inspector/promises"
import { findSourceMap } from "node:module"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import uWS from "uWebSockets.js"
import { ascending, ask, brokers, type Bench, cpuMsPer, database, kindIs, machine, platformLabel, portOf, post, progressOf, quantile, row, runBench, serveCeiling, settle, startNode, table, tally } from "./harness.ts"

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64)
const PROFILE_DIR = process.env.BENCH_PROFILE || undefined
/** A request gives up after this long. */
const REQUEST_TIMEOUT_MS = 60_000
const HELLO = "hello"
const PATHNAME = "/a2a"

type Method = "message/send" | "tasks/get"

/** What the bench reads of a serving process: CPU time of all its threads, and its event loop's time. */
interface Usage {
  readonly cpu: NodeJS.CpuUsage
  readonly loop: { readonly idle: number; readonly active: number }
}

const usageNow = (): Usage => {
  const { idle, active } = performance.eventLoopUtilization()
  return { cpu: process.cpuUsage(), loop: { idle, active } }
}

// ---------------------------------------------------------------------------------------------
// The ceiling (child process): a bare uWS JSON-RPC route answering a fixed Task.

const startCeiling = () => {
  let result: unknown = null
  const app = uWS.App()
  app.post(PATHNAME, (res) => {
    let aborted = false
    let body = Buffer.alloc(0)
    res.onAborted(() => void (aborted = true))
    res.onData((part, isLast) => {
      body = Buffer.concat([body, Buffer.from(part)])
      if (!isLast) return
      const { id } = JSON.parse(body.toString("utf8")) as { id: string | number | null }
      if (aborted) return
      const answer = JSON.stringify({ jsonrpc: "2.0", id, result })
      res.cork(() => {
        res.writeStatus("200 OK")
        res.writeHeader("content-type", "application/json")
        res.end(answer)
      })
    })
  })
  void serveCeiling(app, async (message: { kind: "usage" } | { kind: "result"; result: unknown }) => {
    if (message.kind === "usage") return { kind: "usage", usage: usageNow() }
    result = message.result
    return { kind: "result" }
  })
}

// ---------------------------------------------------------------------------------------------
// The load generator (child process): node:http, one socket per request in flight.

interface Load {
  readonly kind: "load"
  readonly port: number
  readonly key: string
  readonly method: Method
  /** tasks/get: the task read. */
  readonly taskId: string
  readonly concurrency: number
  readonly seconds: number
}

interface LoadResult {
  readonly kind: "loaded"
  /** Milliseconds from each request's start to its answer's last byte, every answer. */
  readonly latencies: ReadonlyArray<number>
  /** From the first request to the last answer. */
  readonly seconds: number
  /** How long the requests in flight at the window's end took to finish. */
  readonly drainSeconds: number
  /** The load generator's own event-loop utilization over the run. */
  readonly clientBusy: number
  readonly failures: ReadonlyArray<string>
}

let nextId = 1

/** The request body of `method`, with a fresh JSON-RPC id (and, for message/send, a fresh messageId). */
const bodyOf = (method: Method, taskId: string) => {
  const id = nextId++
  const params =
    method === "message/send"
      ? { message: { kind: "message", role: "user", parts: [{ kind: "text", text: HELLO }], messageId: randomUUID() } }
      : { id: taskId }
  return { id, body: JSON.stringify({ jsonrpc: "2.0", id, method, params }) }
}

/** One request; resolves with its latency, or a failure. */
const rpc = (port: number, key: string, method: Method, taskId: string) =>
  new Promise<{ ms: number; failure?: string }>((resolve) => {
    const { id, body } = bodyOf(method, taskId)
    const started = performance.now()
    post(
      { port, path: PATHNAME, key },
      body,
      REQUEST_TIMEOUT_MS,
      `no answer within ${REQUEST_TIMEOUT_MS} ms`,
      (response, settle) => {
        const chunks: Buffer[] = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("error", (error) => settle(error.message))
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          if (response.statusCode !== 200) return settle(`${response.statusCode} ${text.slice(0, 160)}`)
          let answer: { id?: unknown; result?: { kind?: string; status?: { state?: string } }; error?: { code: number; message: string } }
          try {
            answer = JSON.parse(text)
          } catch {
            return settle(`not JSON: ${text.slice(0, 160)}`)
          }
          if (answer.error !== undefined) return settle(`error ${answer.error.code} ${answer.error.message}`)
          if (answer.id !== id) return settle(`answered id ${String(answer.id)} to ${id}`)
          if (answer.result?.kind !== "task") return settle(`not a Task: ${text.slice(0, 160)}`)
          if (method === "message/send" && answer.result.status?.state !== "completed") return settle(`task ${answer.result.status?.state}`)
          settle()
        })
      },
      (failure) => resolve({ ms: performance.now() - started, failure })
    )
  })

const generateLoad = async ({ port, key, method, taskId, concurrency, seconds }: Load): Promise<LoadResult> => {
  const latencies: number[] = []
  const failures: string[] = []
  const loopBefore = performance.eventLoopUtilization()
  const started = performance.now()
  const deadline = started + seconds * 1000
  const worker = async () => {
    while (performance.now() < deadline) {
      const { ms, failure } = await rpc(port, key, method, taskId)
      if (failure !== undefined) failures.push(failure)
      latencies.push(ms)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  const ended = performance.now()
  return {
    kind: "loaded",
    latencies,
    seconds: (ended - started) / 1000,
    drainSeconds: Math.max(0, ended - deadline) / 1000,
    clientBusy: performance.eventLoopUtilization(loopBefore).utilization,
    failures: tally(failures)
  }
}

// ---------------------------------------------------------------------------------------------
// CPU profiles of the platform's windows, and their top costs.

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number }
  readonly children?: ReadonlyArray<number>
}

interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/**
 * A frame as a function name and where it is, and the place its code lives: a package, Node's own
 * modules, a directory of the platform (its `.ts` positions mapped back through tsx's source maps,
 * since tsx writes each module on one line), or V8 itself (the collector, native code).
 */
const frameOf = (frame: ProfileNode["callFrame"]) => {
  const { functionName, url, lineNumber, columnNumber } = frame
  if (url === "") {
    const native = functionName || "(unnamed native)"
    return { name: native, place: native.startsWith("(") ? native : `native ${native}` }
  }
  const name = functionName || "(anonymous)"
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(url)
  if (pkg !== null) return { name: `${name} ${pkg[1]}/${pkg[2]}:${lineNumber + 1}`, place: pkg[1] }
  if (url.startsWith("node:")) return { name: `${name} ${url}:${lineNumber + 1}`, place: "node built-ins" }
  const entry = findSourceMap(url)?.findEntry(lineNumber, columnNumber)
  const original = entry !== undefined && "originalSource" in entry ? entry : undefined
  const file = path.relative(root, fileURLToPath(original?.originalSource ?? url))
  const [top, sub] = file.split(path.sep)
  return { name: `${name} ${file}:${(original?.originalLine ?? lineNumber) + 1}`, place: `platform ${top === "actors" ? `actors/${sub}` : top}/` }
}

/**
 * Self time of the top functions and of each place, as shares of the busy (not idle) samples; for a
 * place also the share of busy samples with it anywhere on the stack. The inspector's own work
 * (stopping the profile) is left out.
 */
const summarize = (profile: CpuProfile, top = 15) => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const frames = new Map(profile.nodes.map((n) => [n.id, frameOf(n.callFrame)]))
  /** Each node's places on its stack, itself included; undefined under the inspector. */
  const stacks = new Map<number, ReadonlySet<string> | undefined>()
  const walk = (id: number, above: ReadonlySet<string> | undefined) => {
    const node = byId.get(id)!
    const here = above === undefined || node.callFrame.url === "node:inspector" ? undefined : new Set([...above, frames.get(id)!.place])
    stacks.set(id, here)
    for (const child of node.children ?? []) walk(child, here)
  }
  walk(profile.nodes[0].id, new Set())
  let idle = 0
  let busy = 0
  const byFunction = new Map<string, number>()
  const byPlace = new Map<string, number>()
  const onStack = new Map<string, number>()
  const add = (m: Map<string, number>, key: string, us: number) => m.set(key, (m.get(key) ?? 0) + us)
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]
    const us = profile.timeDeltas[i]
    const stack = stacks.get(id)
    if (stack === undefined) continue
    const { name, place } = frames.get(id)!
    if (name === "(idle)") {
      idle += us
      continue
    }
    busy += us
    add(byFunction, name, us)
    add(byPlace, place, us)
    for (const p of stack) add(onStack, p, us)
  }
  const share = (us: number | undefined) => `${((100 * (us ?? 0)) / busy).toFixed(1)} %`
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1])
  return {
    busyShare: busy / (busy + idle),
    functions: sorted(byFunction).slice(0, top).map(([name, us]) => `| ${name} | ${share(us)} |`),
    places: sorted(byPlace).slice(0, 14).map(([place, us]) => `| ${place} | ${share(us)} | ${place.startsWith("(") ? "" : share(onStack.get(place))} |`)
  }
}

// ---------------------------------------------------------------------------------------------
// The bench (this process): a node, the two children, the measurements, the tables.

const progress = progressOf("bench:a2a")

const bench = async (context: Bench) => {
  progress(`starting a node (${database}, ${brokers.length === 0 ? "embedded" : "Kafka"} log)`)
  const node = await startNode(context, { unlimitedChat: true })
  const key = node.bootstrap.workspaceKey

  const ceiling = context.fork("ceiling")
  const ceilingPort = await portOf(ceiling)
  const load = context.fork("load")
  const ports = { ceiling: ceilingPort, platform: node.port }
  type Which = keyof typeof ports

  /** One JSON-RPC call from this process, for the setup. */
  const call = async (method: Method, params: object) => {
    const reply = await fetch(`http://127.0.0.1:${node.port}${PATHNAME}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: "setup", method, params })
    })
    const answer = (await reply.json()) as { result?: { id: string; status: { state: string } }; error?: unknown }
    if (reply.status !== 200 || answer.result === undefined) throw new Error(`${method} answered ${reply.status} ${JSON.stringify(answer)}`)
    return answer.result
  }
  // the task tasks/get reads, and the Task the ceiling answers with
  const sent = await call("message/send", { message: { kind: "message", role: "user", parts: [{ kind: "text", text: HELLO }], messageId: randomUUID() } })
  if (sent.status.state !== "completed") throw new Error(`the first task is ${sent.status.state}, not completed`)
  const task = await call("tasks/get", { id: sent.id })
  await ask(ceiling, { kind: "result", result: task }, kindIs("result"))

  const usage = (which: Which) =>
    which === "platform" ? Promise.resolve(usageNow()) : ask<{ usage: Usage }>(ceiling, { kind: "usage" }, kindIs("usage")).then((m) => m.usage)

  const session = PROFILE_DIR === undefined ? undefined : new Session()
  if (session !== undefined && PROFILE_DIR !== undefined) {
    await mkdir(PROFILE_DIR, { recursive: true })
    session.connect()
    await session.post("Profiler.enable")
  }
  const profiles: Partial<Record<Method, CpuProfile>> = {}

  const measure = async (which: Which, method: Method, seconds: number, profiled = false) => {
    progress(`${which}: ${method}, ${CONCURRENCY} in flight, ${seconds} s`)
    if (which === "platform") await settle(node)
    const profiling = profiled && which === "platform" && session !== undefined
    if (profiling) await session.post("Profiler.start")
    const before = await usage(which)
    const result = await ask<LoadResult>(
      load,
      { kind: "load", port: ports[which], key, method, taskId: sent.id, concurrency: CONCURRENCY, seconds } satisfies Load,
      kindIs("loaded")
    )
    const after = await usage(which)
    if (profiling) {
      const { profile } = await session.post("Profiler.stop")
      profiles[method] = profile as CpuProfile
      await writeFile(path.join(PROFILE_DIR!, `a2a-${method === "message/send" ? "send" : "get"}.cpuprofile`), JSON.stringify(profile))
    }
    if (result.failures.length > 0) throw new Error(`${which}, ${method}: ${result.failures.join("; ")}`)
    const cpuMs = cpuMsPer(before.cpu, after.cpu, result.latencies.length)
    const active = after.loop.active - before.loop.active
    const busy = active / (active + after.loop.idle - before.loop.idle)
    return { ...result, cpuMs, busy, sorted: ascending(result.latencies) }
  }

  // warm both up, then measure each in turn
  await measure("ceiling", "message/send", WARMUP_SECONDS)
  await measure("platform", "message/send", WARMUP_SECONDS)
  await measure("ceiling", "tasks/get", WARMUP_SECONDS)
  await measure("platform", "tasks/get", WARMUP_SECONDS)
  const send = { ceiling: await measure("ceiling", "message/send", SECONDS), platform: await measure("platform", "message/send", SECONDS, true) }
  const get = { ceiling: await measure("ceiling", "tasks/get", SECONDS), platform: await measure("platform", "tasks/get", SECONDS, true) }
  session?.disconnect()

  type Measured = Awaited<ReturnType<typeof measure>>
  const rate = (r: Measured) => r.latencies.length / r.seconds
  const int = (n: number) => Math.round(n).toLocaleString("en-US")
  const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1))
  const platform = platformLabel(node.log.mode)
  const methodRow = (method: Method, what: string, r: Measured) =>
    row([
      method,
      what,
      int(r.latencies.length),
      r.seconds.toFixed(1),
      int(rate(r)),
      ms(quantile(r.sorted, 0.5)),
      ms(quantile(r.sorted, 0.99)),
      r.cpuMs.toFixed(r.cpuMs >= 10 ? 1 : 3),
      `${(100 * r.busy).toFixed(0)} %`,
      `${(100 * r.clientBusy).toFixed(0)} %`
    ])
  const ratio = (platform: number, ceiling: number) => {
    const x = platform / ceiling
    return x >= 10 ? x.toFixed(0) : x >= 0.1 ? x.toFixed(2) : x.toFixed(4)
  }
  const ratios = (method: Method, r: { ceiling: Measured; platform: Measured }) =>
    `${method}: requests/s ${ratio(rate(r.platform), rate(r.ceiling))}, p50 ${ratio(quantile(r.platform.sorted, 0.5), quantile(r.ceiling.sorted, 0.5))}, ` +
    `p99 ${ratio(quantile(r.platform.sorted, 0.99), quantile(r.ceiling.sorted, 0.99))}, CPU per request ${ratio(r.platform.cpuMs, r.ceiling.cpuMs)}`
  const sendMet = rate(send.platform) >= 1000 && quantile(send.platform.sorted, 0.99) < 100
  const getMet = rate(get.platform) >= 10_000
  const profileTables = (["message/send", "tasks/get"] as const).flatMap((method) => {
    const profile = profiles[method]
    if (profile === undefined) return []
    const { busyShare, functions, places } = summarize(profile)
    return [
      "",
      `CPU profile of the platform's ${method} window (main thread ${(100 * busyShare).toFixed(0)} % busy; shares of the busy time, self time):`,
      "",
      ...table(["place", "self", "on the stack"], "lrr", places),
      "",
      ...table(["function", "self"], "lr", functions)
    ]
  })

  console.log([
    `${machine(node.log.mode)}; offline model; ${CONCURRENCY} in flight, ${SECONDS} s per window${PROFILE_DIR === undefined ? "" : "; the platform's windows CPU-profiled (slower)"}.`,
    "",
    `\`POST ${PATHNAME}\` (s: from the first request to the last answer, the answers in flight at the window's end included; latency in ms; ` +
      "CPU: the serving process's, all threads, per request; busy: the event-loop utilization of the serving process and of the load generator):",
    "",
    ...table(
      ["method", "server", "answers", "s", "requests/s", "p50 ms", "p99 ms", "CPU ms per request", "server busy", "client busy"],
      "llrrrrrrrr",
      [
        methodRow("message/send", "ceiling (bare uWS)", send.ceiling),
        methodRow("message/send", platform, send.platform),
        methodRow("tasks/get", "ceiling (bare uWS)", get.ceiling),
        methodRow("tasks/get", platform, get.platform)
      ]
    ),
    "",
    `Ratios, platform ÷ ceiling: ${ratios("message/send", send)}; ${ratios("tasks/get", get)}.`,
    "",
    `Targets: message/send at least 1,000/s with p99 under 100 ms: ${sendMet ? "met" : "not met"} ` +
      `(${int(rate(send.platform))}/s, p99 ${ms(quantile(send.platform.sorted, 0.99))} ms); ` +
      `tasks/get at least 10,000/s: ${getMet ? "met" : "not met"} (${int(rate(get.platform))}/s).`,
    ...profileTables
  ].join("\n"))
}

runBench(import.meta.url, { bench, load: generateLoad, ceiling: startCeiling })
