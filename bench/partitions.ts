/**
 * What more partitions cost a node, as a user runs it (`bin/main.ts`, real Postgres): for each
 * partition count (`BENCH_PARTITIONS`, default 12,48,96), on the embedded log and, with
 * KAFKA_BROKERS set, on Kafka, a fresh node owning every partition is measured for
 * - its start: from spawn until `/readyz` answers 200;
 * - idle: CPU ms per second and resident memory over `BENCH_IDLE_SECONDS` (10) of no requests;
 * - its catch-up: after `BENCH_WRITES` (2,000) creates spread over the partitions, the node is
 *   stopped and started again on the same data; the time until `/readyz` answers 200.
 *
 * Each node is a child process of its own, read through /proc, so the bench's own work is not
 * counted.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtemp, readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { freePort } from "../src/platform/ports.ts"

const counts = (process.env.BENCH_PARTITIONS ?? "12,48,96").split(",").map(Number)
const idleSeconds = Number(process.env.BENCH_IDLE_SECONDS ?? 10)
const writes = Number(process.env.BENCH_WRITES ?? 2_000)
const databaseUrl = process.env.DATABASE_URL
const brokers = process.env.KAFKA_BROKERS ?? ""
const root = path.resolve(import.meta.dirname, "..")
const CLIENTS = 16
const CLOCK_TICKS = 100

if (databaseUrl === undefined) throw new Error("bench/partitions.ts measures a node on real Postgres: set DATABASE_URL")

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Started {
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly readyMs: number
}

const start = async (env: Record<string, string>): Promise<Started> => {
  const port = await freePort()
  const began = performance.now()
  const child = spawn(process.execPath, ["--import", "tsx", "bin/main.ts"], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1", BASE_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"]
  })
  const baseUrl = `http://127.0.0.1:${port}`
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the node exited (${child.exitCode}) before it was ready`)
    const ready = await fetch(`${baseUrl}/readyz`).then((r) => r.status === 200, () => false)
    if (ready) return { child, baseUrl, readyMs: performance.now() - began }
    await sleep(20)
  }
}

const stop = async ({ child }: Started) => {
  const exited = new Promise((resolve) => child.once("exit", resolve))
  child.kill("SIGTERM")
  await exited
}

/** CPU seconds (user + system) and resident bytes of a process, from /proc. */
const usage = async (pid: number) => {
  const stat = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1].split(" ")
  const status = await readFile(`/proc/${pid}/status`, "utf8")
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)![1])
  return { cpu: (Number(stat[11]) + Number(stat[12])) / CLOCK_TICKS, rss: rssKb * 1024 }
}

const createMany = async (node: Started, key: string, org: string, ws: string) => {
  const post = (capability: string, body: unknown) =>
    fetch(`${node.baseUrl}/v1/${org}/${ws}/${capability}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify(body) })
  const defined = await post("schema/define_label", { label: "Item", properties: { n: { type: "number", required: true } } })
  if (defined.status !== 200) throw new Error(`define_label answered ${defined.status}`)
  let next = 0
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    for (let n = next++; n < writes; n = next++) {
      const created = await post("node/create", { label: "Item", properties: { n } })
      if (created.status !== 200) throw new Error(`node/create answered ${created.status}: ${await created.text()}`)
    }
  }))
}

const measure = async (partitions: number, log: "embedded" | "kafka") => {
  const dataDir = await mkdtemp(path.join(tmpdir(), "svc-bench-partitions-"))
  const env = {
    DATABASE_URL: databaseUrl,
    DB_SCHEMA: `bench_p${partitions}_${log}_${process.pid}`,
    SVC_DATA_DIR: dataDir,
    LOG_PARTITIONS: String(partitions),
    KAFKA_BROKERS: log === "kafka" ? brokers : "",
    KAFKA_TOPIC_PREFIX: `bench-p${partitions}-${process.pid}`,
    NODE_ID: "bench"
  }
  const first = await start(env)
  await sleep(2_000)
  const before = await usage(first.child.pid!)
  await sleep(idleSeconds * 1000)
  const after = await usage(first.child.pid!)
  const idleCpuMsPerSecond = ((after.cpu - before.cpu) * 1000) / idleSeconds
  const { workspaceKey, orgSlug, workspaceSlug } = JSON.parse(await readFile(path.join(dataDir, "bootstrap.json"), "utf8"))
  const wrote = performance.now()
  await createMany(first, workspaceKey, orgSlug, workspaceSlug)
  const writeSeconds = (performance.now() - wrote) / 1000
  await stop(first)
  const again = await start(env)
  await stop(again)
  return { partitions, log, startMs: first.readyMs, idleCpuMsPerSecond, rssMb: after.rss / 2 ** 20, creates: writes, writeSeconds, restartMs: again.readyMs }
}

const rows: Array<Awaited<ReturnType<typeof measure>>> = []
for (const log of brokers === "" ? (["embedded"] as const) : (["embedded", "kafka"] as const)) {
  for (const partitions of counts) {
    const row = await measure(partitions, log)
    rows.push(row)
    console.log(JSON.stringify(row))
  }
}
console.log("\n| log | partitions | start to ready | idle CPU | resident memory | 2,000 creates | restart to ready |")
console.log("|---|---:|---:|---:|---:|---:|---:|")
for (const r of rows) {
  console.log(`| ${r.log} | ${r.partitions} | ${Math.round(r.startMs)} ms | ${r.idleCpuMsPerSecond.toFixed(1)} ms/s | ${Math.round(r.rssMb)} MB | ${r.writeSeconds.toFixed(1)} s | ${Math.round(r.restartMs)} ms |`)
}
