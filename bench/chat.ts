/**
 * `npm run bench:chat`: what a chat stream costs, with the built-in offline model (no provider).
 * `POST /v1/{org}/{workspace}/chat/stream` with the bootstrap workspace key, measured three ways:
 *
 * 1. Latency: milliseconds from the request's start to the stream's `run` event and to its named
 *    `done` event, p50/p99, over BENCH_TURNS turns one after another and over BENCH_CONCURRENT_TURNS
 *    turns BENCH_CONCURRENCY at a time (after BENCH_WARMUP_TURNS); content `hello`, a new
 *    conversation per turn; and the serving process's CPU time (`process.cpuUsage()`) per turn.
 * 2. Open streams: BENCH_STREAMS requests sent at once, content `/slow <BENCH_HOLD_MS>\n/long 4`
 *    (the offline model waits BENCH_HOLD_MS between its two text chunks, so every turn stays open,
 *    with a `: keep-alive` comment after 15 quiet seconds). Reported: how many were open at once
 *    (had their `run` event and not yet `done`), how many ended with a turn result, and the serving
 *    process's RSS and V8 heap (`process.memoryUsage()`): after a full collection before the
 *    streams, after another once every stream had its `run` event, and the highest of samples taken
 *    every 250 ms in between (garbage included). With BENCH_HEAP_SNAPSHOT=<prefix>, each serving
 *    process also writes a V8 heap snapshot at both collections (`<prefix>.before.<pid>` and
 *    `<prefix>.open.<pid>`, `.heapsnapshot`): what an open stream holds is their difference.
 * 3. Ceiling: the same requests, byte for byte, to a bare uWebSockets.js SSE route in a child
 *    process (this file again, argument `ceiling`): it reads the body, writes the three stream
 *    headers, a `run` event, the text the offline model would write in the same chunks with the
 *    same `/slow` waits (and the same keep-alive comment), and `event: done`. Platform ÷ ceiling
 *    ratios close the output.
 *
 * One node runs in this process, as in bench/auth.ts: embedded PGlite unless DATABASE_URL is set,
 * the embedded log unless KAFKA_BROKERS is set, the chat rate limit raised out of the way. The load
 * comes from another child process (argument `load`), over `node:http` with an agent without a
 * socket limit, one socket per stream in flight. Neither child loads the platform's modules.
 * Writes Markdown tables to stdout.
 */
import { randomBytes } from "node:crypto"
import { readFile } from "node:fs/promises"
import v8 from "node:v8"
import vm from "node:vm"
import uWS from "uWebSockets.js"
import { ascending, ask, type Bench, cpuMsPer, kindIs, machine, offlineAnswer, platformLabel, portOf, post, progressOf, quantile, row, runBench, serveCeiling, settle, startNode, table, type Target, tally } from "./harness.ts"
import { chatTurn, countWork, workTable } from "./counting.ts"
/** Operations whose work is counted, one at a time, before the windows. */
const WORK_OPERATIONS = Number(process.env.BENCH_WORK_OPERATIONS ?? 30)

const TURNS = Number(process.env.BENCH_TURNS ?? 200)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const CONCURRENT_TURNS = Number(process.env.BENCH_CONCURRENT_TURNS ?? 400)
const WARMUP_TURNS = Number(process.env.BENCH_WARMUP_TURNS ?? 30)
const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000)
const HOLD_MS = Number(process.env.BENCH_HOLD_MS ?? 20_000)
/** Latency turns give up after this long; held streams after BENCH_HOLD_MS plus this. */
const STREAM_TIMEOUT_MS = 120_000
const KEEP_ALIVE_MS = 15_000
const HELLO = "hello"
const HOLD_CONTENT = `/slow ${HOLD_MS}\n/long 4`

// a full collection before each memory reading, so that it counts what is live, not garbage
v8.setFlagsFromString("--expose-gc")
const gc = vm.runInNewContext("gc") as () => void

interface Memory {
  readonly rss: number
  readonly heapUsed: number
}

interface MemoryWindow {
  /** After a full collection, before the streams. */
  readonly before: Memory
  /** After a full collection, once every stream had its `run` event. */
  readonly open: Memory
  /** The highest of the samples taken every 250 ms in between (garbage included). */
  readonly peak: Memory
}

/** What the bench reads of a serving process: its CPU time, and its memory around the open streams. */
interface Probe {
  readonly cpu: () => Promise<NodeJS.CpuUsage>
  readonly startMemory: () => Promise<void>
  readonly openMemory: () => Promise<void>
  readonly stopMemory: () => Promise<MemoryWindow>
}

type ProbeOp = "cpu" | "startMemory" | "openMemory" | "stopMemory"

const localProbe = (): Probe => {
  const read = (): Memory => {
    const { rss, heapUsed } = process.memoryUsage()
    return { rss, heapUsed }
  }
  const settled = () => {
    gc()
    return read()
  }
  let before: Memory = read()
  let open: Memory = before
  let peak: Memory = before
  let timer: NodeJS.Timeout | undefined
  const sample = () => {
    const now = read()
    peak = { rss: Math.max(peak.rss, now.rss), heapUsed: Math.max(peak.heapUsed, now.heapUsed) }
  }
  return {
    cpu: async () => process.cpuUsage(),
    startMemory: async () => {
      before = open = peak = settled()
      if (process.env.BENCH_HEAP_SNAPSHOT) progress(`heap snapshot: ${v8.writeHeapSnapshot(`${process.env.BENCH_HEAP_SNAPSHOT}.before.${process.pid}.heapsnapshot`)}`)
      timer = setInterval(sample, 250)
    },
    openMemory: async () => {
      sample()
      open = settled()
      if (process.env.BENCH_HEAP_SNAPSHOT) progress(`heap snapshot: ${v8.writeHeapSnapshot(`${process.env.BENCH_HEAP_SNAPSHOT}.open.${process.pid}.heapsnapshot`)}`)
    },
    stopMemory: async () => {
      clearInterval(timer)
      sample()
      return { before, open, peak }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The ceiling (child process): a bare uWS SSE route answering like the offline model.

const startCeiling = () => {
  const app = uWS.App()
  app.post("/v1/*", (res) => {
    /** The client went away, or the response ended. */
    let closed = false
    let body = Buffer.alloc(0)
    let timer: NodeJS.Timeout | undefined
    let keepAlive: NodeJS.Timeout | undefined
    res.onAborted(() => {
      closed = true
      clearTimeout(timer)
      clearTimeout(keepAlive)
    })
    const write = (chunk: string) => {
      if (closed) return
      keepAlive?.refresh()
      res.cork(() => res.write(chunk))
    }
    res.onData((part, isLast) => {
      body = Buffer.concat([body, Buffer.from(part)])
      if (!isLast) return
      const { content } = JSON.parse(body.toString("utf8")) as { content: string }
      const { chunks, slowMs } = offlineAnswer(content)
      const runId = `tse_${randomBytes(16).toString("hex")}`
      res.cork(() => {
        res.writeStatus("200 OK")
        res.writeHeader("content-type", "text/event-stream")
        res.writeHeader("cache-control", "no-cache")
        res.writeHeader("connection", "keep-alive")
        res.write(`data: ${JSON.stringify({ type: "run", runId })}\n\n`)
      })
      keepAlive = setTimeout(function quiet() {
        write(": keep-alive\n\n")
      }, KEEP_ALIVE_MS)
      let next = 0
      const step = () => {
        if (closed) return
        write(`data: ${JSON.stringify({ type: "text", text: chunks[next++] })}\n\n`)
        if (next < chunks.length) {
          timer = setTimeout(step, slowMs)
          return
        }
        clearTimeout(keepAlive)
        const result = { runId, reply: chunks.join("") }
        res.cork(() => {
          res.write(`event: done\ndata: ${JSON.stringify(result)}\n\n`)
          res.end()
        })
        closed = true
      }
      step()
    })
  })
  const probe = localProbe()
  void serveCeiling(app, async (message: { kind: "probe"; op: ProbeOp }) => ({ kind: "probe", value: (await probe[message.op]()) ?? null }))
}

// ---------------------------------------------------------------------------------------------
// The load generator (child process): node:http, one socket per stream in flight.

interface Latency {
  readonly kind: "latency"
  readonly target: Target
  readonly turns: number
  readonly concurrency: number
}

interface Hold {
  readonly kind: "hold"
  readonly target: Target
  readonly streams: number
}

interface Turn {
  /** Milliseconds from the request's start to the `run` event and to the `done` event. */
  runMs?: number
  doneMs?: number
  keepAlives: number
  failure?: string
}

interface LatencyResult {
  readonly seconds: number
  readonly turns: ReadonlyArray<Turn>
}

interface HoldResult extends LatencyResult {
  /** Most streams that had their `run` event and not yet `done`, at any one time. */
  readonly peakOpen: number
  /** Milliseconds from the first request to the last `run` event. */
  readonly allRunMs: number
}

/** One turn: POST, read the SSE stream to its `done` event. */
const streamTurn = (target: Target, content: string, timeoutMs: number, hooks: { onRun?: () => void; onEnd?: () => void } = {}) =>
  new Promise<Turn>((resolve) => {
    const body = JSON.stringify({ content })
    const turn: Turn = { keepAlives: 0 }
    const started = performance.now()
    post(
      target,
      body,
      timeoutMs,
      `no done within ${timeoutMs} ms`,
      (response, settle) => {
        response.setEncoding("utf8")
        let buffered = ""
        if (response.statusCode !== 200 || !(response.headers["content-type"] ?? "").startsWith("text/event-stream")) {
          response.on("data", (chunk: string) => (buffered += chunk))
          response.on("end", () => settle(`${response.statusCode} ${buffered.slice(0, 160)}`))
          response.on("error", (error) => settle(`${response.statusCode} ${error.message}`))
          return
        }
        const block = (framed: string) => {
          // the event's `id:` line, when it has one, goes first
          const text = framed.replace(/^id: [^\n]*\n/, "")
          if (text.startsWith(":")) turn.keepAlives++
          else if (text.startsWith("event: done\n")) {
            turn.doneMs = performance.now() - started
            const data = text.slice("event: done\ndata: ".length)
            if (data === "[DONE]" && turn.failure === undefined) turn.failure = "done [DONE] without an error event"
          } else if (turn.runMs === undefined && text.startsWith('data: {"type":"run"')) {
            turn.runMs = performance.now() - started
            hooks.onRun?.()
          } else if (text.startsWith('data: {"type":"error"')) {
            const error = JSON.parse(text.slice("data: ".length)) as { code?: string; message: string }
            turn.failure = `error event ${error.code ?? ""}: ${error.message}`
          }
        }
        response.on("data", (chunk: string) => {
          buffered += chunk
          for (let end = buffered.indexOf("\n\n"); end !== -1; end = buffered.indexOf("\n\n")) {
            block(buffered.slice(0, end))
            buffered = buffered.slice(end + 2)
          }
        })
        response.on("end", () => settle(turn.doneMs === undefined ? "the stream ended without done" : undefined))
        response.on("error", (error) => settle(error.message))
      },
      (failure) => {
        if (failure !== undefined && turn.failure === undefined) turn.failure = failure
        if (turn.runMs !== undefined) hooks.onEnd?.()
        resolve(turn)
      }
    )
  })

const runLatency = async ({ target, turns, concurrency }: Latency): Promise<LatencyResult> => {
  const results: Turn[] = []
  let issued = 0
  const started = performance.now()
  const worker = async () => {
    while (issued < turns) {
      issued++
      results.push(await streamTurn(target, HELLO, STREAM_TIMEOUT_MS))
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return { seconds: (performance.now() - started) / 1000, turns: results }
}

/** Sends every stream at once; tells the parent `opened` once each has its `run` event or has failed. */
const runHold = async ({ target, streams }: Hold): Promise<HoldResult> => {
  let open = 0
  let peakOpen = 0
  let lastRun = 0
  let opening = streams
  const opened = () => {
    if (--opening === 0) process.send!({ kind: "opened" })
  }
  const started = performance.now()
  const hooks = {
    onRun: () => {
      lastRun = performance.now()
      peakOpen = Math.max(peakOpen, ++open)
      opened()
    },
    onEnd: () => void open--
  }
  const turns = await Promise.all(
    Array.from({ length: streams }, () =>
      streamTurn(target, HOLD_CONTENT, HOLD_MS + STREAM_TIMEOUT_MS, hooks).then((turn) => {
        if (turn.runMs === undefined) opened()
        return turn
      })
    )
  )
  return { seconds: (performance.now() - started) / 1000, turns, peakOpen, allRunMs: lastRun === 0 ? NaN : lastRun - started }
}

const generateLoad = (message: Latency | Hold) => (message.kind === "latency" ? runLatency(message) : runHold(message))

// ---------------------------------------------------------------------------------------------
// The bench (this process): a node, the two children, the measurements, the tables.

const progress = progressOf("bench:chat")

/** The `q` quantile of `values`, to a tenth; a dash when there is none. */
const at = (values: ReadonlyArray<number>, q: number) => (values.length === 0 ? "–" : quantile(ascending(values), q).toFixed(1))

const median = (values: ReadonlyArray<number>) => quantile(ascending(values), 0.5)

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1)

/** The failures of a run, counted by message. */
const failuresOf = (turns: ReadonlyArray<Turn>) => tally(turns.flatMap((turn) => (turn.failure === undefined ? [] : [turn.failure])))

const fdLimit = async () => {
  try {
    const limits = await readFile("/proc/self/limits", "utf8")
    return /Max open files\s+(\d+)/.exec(limits)?.[1] ?? "?"
  } catch {
    return "?"
  }
}

const bench = async (context: Bench) => {
  const node = await startNode(context, { unlimitedChat: true })
  const { orgSlug, workspaceSlug, workspaceKey } = node.bootstrap
  // the work one turn costs the node, counted first (`counting.ts`)
  const work = await countWork(node, "chat turn", chatTurn(node), WORK_OPERATIONS)
  const pathname = `/v1/${encodeURIComponent(orgSlug)}/${encodeURIComponent(workspaceSlug)}/chat/stream`

  const ceiling = context.fork("ceiling")
  const ceilingPort = await portOf(ceiling)
  const load = context.fork("load")

  const targets = {
    ceiling: { port: ceilingPort, path: pathname, key: workspaceKey },
    platform: { port: node.port, path: pathname, key: workspaceKey }
  }

  const probeCeiling = (op: ProbeOp) => ask<{ value: any }>(ceiling, { kind: "probe", op }, kindIs("probe")).then((m) => m.value)
  const isResult = (m: any): m is any => Array.isArray(m?.turns)

  const latency = async (which: keyof typeof targets, turns: number, concurrency: number) => {
    progress(`${which}: ${turns} turns, ${concurrency} in flight`)
    if (which === "platform") await settle(node)
    const cpuBefore = await probes[which].cpu()
    const result = await ask<LatencyResult>(load, { kind: "latency", target: targets[which], turns, concurrency } satisfies Latency, isResult)
    const cpu = await probes[which].cpu()
    const failures = failuresOf(result.turns)
    if (failures.length > 0) throw new Error(`${which}, ${concurrency} at a time: ${failures.join("; ")}`)
    /** CPU milliseconds of the serving process (all its threads) per turn. */
    const cpuMs = cpuMsPer(cpuBefore, cpu, turns)
    return { ...result, cpuMs }
  }

  const probes: Record<keyof typeof targets, Probe> = {
    platform: localProbe(),
    ceiling: {
      cpu: () => probeCeiling("cpu"),
      startMemory: () => probeCeiling("startMemory"),
      openMemory: () => probeCeiling("openMemory"),
      stopMemory: () => probeCeiling("stopMemory")
    }
  }

  const hold = async (which: keyof typeof targets) => {
    progress(`${which}: ${STREAMS} streams at once`)
    if (which === "platform") await settle(node)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const probe = probes[which]
    await probe.startMemory()
    let measuredOpen: Promise<void> = Promise.resolve()
    const onOpened = (message: { kind?: string }) => {
      if (message?.kind !== "opened") return
      progress(`${which}: every stream has its run event or has failed`)
      measuredOpen = probe.openMemory()
    }
    load.on("message", onOpened)
    try {
      const result = await ask<HoldResult>(load, { kind: "hold", target: targets[which], streams: STREAMS } satisfies Hold, isResult)
      await measuredOpen
      return { result, memory: await probe.stopMemory() }
    } finally {
      load.off("message", onOpened)
    }
  }

  // warm both up, then measure each in turn
  await latency("ceiling", WARMUP_TURNS, 1)
  await latency("platform", WARMUP_TURNS, 1)
  const sequential = { ceiling: await latency("ceiling", TURNS, 1), platform: await latency("platform", TURNS, 1) }
  const concurrent = {
    ceiling: await latency("ceiling", CONCURRENT_TURNS, CONCURRENCY),
    platform: await latency("platform", CONCURRENT_TURNS, CONCURRENCY)
  }
  const held = { ceiling: await hold("ceiling"), platform: await hold("platform") }

  type Measured = LatencyResult & { readonly cpuMs: number }
  const latencyRow = (what: string, mode: string, r: Measured) => {
    const run = r.turns.map((t) => t.runMs!)
    const done = r.turns.map((t) => t.doneMs!)
    return row([
      what,
      mode,
      r.turns.length,
      (r.turns.length / r.seconds).toFixed(0),
      at(run, 0.5),
      at(run, 0.99),
      at(done, 0.5),
      at(done, 0.99),
      r.cpuMs.toFixed(2)
    ])
  }
  const kib = (bytes: number, streams: number) => (bytes / Math.max(1, streams) / 1024).toFixed(1)
  const holdRow = (what: string, { result, memory }: { result: HoldResult; memory: MemoryWindow }) => {
    const run = result.turns.flatMap((t) => (t.runMs === undefined ? [] : [t.runMs]))
    const done = result.turns.flatMap((t) => (t.doneMs === undefined ? [] : [t.doneMs / 1000]))
    const gotRun = run.length
    const completed = result.turns.filter((t) => t.doneMs !== undefined && t.failure === undefined).length
    const keepAlive = result.turns.filter((t) => t.keepAlives > 0).length
    const { before, open, peak } = memory
    return row([
      what,
      STREAMS,
      result.peakOpen,
      gotRun,
      completed,
      keepAlive,
      (result.allRunMs / 1000).toFixed(1),
      `${at(run, 0.5)} / ${at(run, 0.99)}`,
      `${at(done, 0.5)} / ${at(done, 0.99)}`,
      `${mib(before.rss)} → ${mib(open.rss)} (${mib(peak.rss)})`,
      `${mib(before.heapUsed)} → ${mib(open.heapUsed)} (${mib(peak.heapUsed)})`,
      `${kib(open.rss - before.rss, result.peakOpen)} / ${kib(open.heapUsed - before.heapUsed, result.peakOpen)}`
    ])
  }
  const medianOf = (r: LatencyResult, field: "runMs" | "doneMs") => median(r.turns.map((t) => t[field]!))
  // a memory figure can shrink over a run (RSS after a collection): no ratio then
  const ratio = (platform: number, ceiling: number) =>
    ceiling <= 0 || platform <= 0 ? "–" : (platform / ceiling).toFixed(platform / ceiling >= 10 ? 0 : 2)
  const growth = (which: keyof typeof targets, field: keyof Memory) => held[which].memory.open[field] - held[which].memory.before[field]
  const holdFailures = (["ceiling", "platform"] as const).flatMap((which) => failuresOf(held[which].result.turns).map((f) => `${which}: ${f}`))
  const platform = platformLabel(node.log.mode)

  console.log([
    `${machine(node.log.mode)}; open files limit ${await fdLimit()}; offline model.`,
    "",
    "The work one turn costs the platform, one at a time:",
    "",
    ...workTable([work]),
    "",
    `Latency, content \`${HELLO}\`, a new conversation per turn (ms from the request's start; CPU: the serving process's, all threads):`,
    "",
    ...table(["server", "in flight", "turns", "turns/s", "run p50", "run p99", "done p50", "done p99", "CPU ms per turn"], "lrrrrrrrr", [
      latencyRow("ceiling (bare uWS)", "1", sequential.ceiling),
      latencyRow(platform, "1", sequential.platform),
      latencyRow("ceiling (bare uWS)", String(CONCURRENCY), concurrent.ceiling),
      latencyRow(platform, String(CONCURRENCY), concurrent.platform)
    ]),
    "",
    `Open streams, ${STREAMS} sent at once, content \`${HOLD_CONTENT.replace("\n", "\\n")}\`. Memory of the serving process in MiB, ` +
      "after a full collection before the streams → after one once all had their run event (in brackets: the highest 250 ms sample, garbage included):",
    "",
    ...table(
      [
        "server",
        "sent",
        "open at once",
        "got run",
        "ended with a result",
        "saw a keep-alive",
        "s to the last run",
        "run ms p50 / p99",
        "done s p50 / p99",
        "RSS",
        "heap used",
        "KiB per open stream: RSS / heap"
      ],
      "lrrrrrrrrllr",
      [holdRow("ceiling (bare uWS)", held.ceiling), holdRow(platform, held.platform)]
    ),
    ...(holdFailures.length === 0 ? [] : ["", `Failures: ${holdFailures.join("; ")}`]),
    "",
    "Ratios, platform ÷ ceiling: " +
      [
        `run p50 ${ratio(medianOf(sequential.platform, "runMs"), medianOf(sequential.ceiling, "runMs"))} (1 in flight), ` +
          `${ratio(medianOf(concurrent.platform, "runMs"), medianOf(concurrent.ceiling, "runMs"))} (${CONCURRENCY})`,
        `done p50 ${ratio(medianOf(sequential.platform, "doneMs"), medianOf(sequential.ceiling, "doneMs"))} (1), ` +
          `${ratio(medianOf(concurrent.platform, "doneMs"), medianOf(concurrent.ceiling, "doneMs"))} (${CONCURRENCY})`,
        `turns/s ${ratio(concurrent.platform.turns.length / concurrent.platform.seconds, concurrent.ceiling.turns.length / concurrent.ceiling.seconds)} (${CONCURRENCY})`,
        `CPU per turn ${ratio(concurrent.platform.cpuMs, concurrent.ceiling.cpuMs)} (${CONCURRENCY})`,
        `streams open at once ${ratio(held.platform.result.peakOpen, held.ceiling.result.peakOpen)}`,
        `RSS growth ${ratio(growth("platform", "rss"), growth("ceiling", "rss"))}, heap growth ${ratio(growth("platform", "heapUsed"), growth("ceiling", "heapUsed"))}`
      ].join("; ") +
      "."
  ].join("\n"))
}

runBench(import.meta.url, { bench, load: generateLoad, servers: { ceiling: startCeiling } })
