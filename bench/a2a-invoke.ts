/**
 * `npx tsx bench/a2a-invoke.ts`: what `tasks/get` costs in the checkpoint, beside what the
 * checkpoint alone costs, without HTTP. One node in this process (as in bench/a2a.ts: embedded
 * PGlite unless DATABASE_URL is set, the embedded log unless KAFKA_BROKERS is set), one completed
 * task of a first `message/send`, then rounds of two windows each, in turn: `invoke` of
 * `system.ping` (the checkpoint and nothing else, on the `mcp` surface) and of `a2a.tasks.get` of
 * that task (on the `a2a` surface), both as the bootstrap workspace key, BENCH_CONCURRENCY (16)
 * calls in flight, BENCH_CALLS (3,000) calls per window after 300 of warm-up. Calls per second and
 * this process's CPU time per call (all its threads; a real Postgres's is not counted), and how
 * many statements read the task's row (`a2a_tasks`; counted through postgres.js's `debug` hook).
 * Both windows pay the invocation's audit record, its append and its projection.
 */
import { Effect, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { invoke } from "../src/checkpoint/Checkpoint.ts"
import type { InvokeRequest, Principal } from "../src/checkpoint/Capability.ts"
import { authenticate } from "../src/identity/Auth.ts"
import { type Bench, runBench, startNode } from "./harness.ts"

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const CALLS = Number(process.env.BENCH_CALLS ?? 3_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)

const bench = async (context: Bench) => {
  const node = await startNode(context, { unlimitedChat: true })
  const key = node.bootstrap.workspaceKey
  const sent = (await (await fetch(`http://127.0.0.1:${node.port}/a2a`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "message/send", params: { message: { kind: "message", role: "user", messageId: randomUUID(), parts: [{ kind: "text", text: "hello" }] } } })
  })).json()) as { result: { id: string; status: { state: string } } }
  if (sent.result.status.state !== "completed") throw new Error(`the first task is ${sent.result.status.state}`)
  const run = Runtime.runPromise(node.runtime)
  const principal = await run(authenticate({ authorization: `Bearer ${key}` }) as Effect.Effect<Principal, unknown>)
  const call = (surface: InvokeRequest<never>["surface"], capability: string, input: unknown) => () =>
    run(invoke({ authorization: undefined, principal, surface, capability, path: null, input: Effect.succeed(input) }) as Effect.Effect<unknown, unknown>)
  const windows = {
    "system.ping": call("mcp", "system.ping", {}),
    "a2a.tasks.get": call("a2a", "a2a.tasks.get", { id: sent.result.id })
  }

  // each answers as it should before anything is measured
  const pong = (await windows["system.ping"]()) as { pong?: boolean }
  const task = (await windows["a2a.tasks.get"]()) as { id?: string }
  if (pong.pong !== true || task.id !== sent.result.id) throw new Error(`unexpected answers ${JSON.stringify(pong)} ${JSON.stringify(task)}`)

  let rowReads = 0
  ;(node.db.sql.options as { debug?: unknown }).debug = (_connection: number, query: string) => {
    if (/^\s*select\b[\s\S]*\ba2a_tasks\b/i.test(query)) rowReads++
  }

  const measure = async (once: () => Promise<unknown>) => {
    for (let i = 0; i < 300; i++) await once()
    rowReads = 0
    const cpu = process.cpuUsage()
    const started = performance.now()
    let begun = 0
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (begun < CALLS) {
        begun++
        await once()
      }
    }))
    const seconds = (performance.now() - started) / 1000
    const used = process.cpuUsage(cpu)
    return { rate: CALLS / seconds, cpuMs: (used.user + used.system) / 1000 / CALLS, rowReads }
  }

  const rows: Array<string> = []
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, once] of Object.entries(windows)) {
      const { rate, cpuMs, rowReads: reads } = await measure(once)
      rows.push(`| ${round} | \`${name}\` | ${Math.round(rate).toLocaleString("en")} | ${cpuMs.toFixed(3)} | ${reads} |`)
    }
  }
  console.log([`${CONCURRENCY} in flight, ${CALLS} calls per window:`, "", "| round | capability | calls/s | CPU ms per call | task row reads |", "|---:|---|---:|---:|---:|", ...rows].join("\n"))
}

runBench(import.meta.url, { bench, load: async () => undefined })
