/**
 * Real processes of the platform (`bin/main.ts`, as `npm start` runs it) on one Kafka cluster and
 * one Postgres, each a child process on a free port with its output in `${dataDir}/${name}.log`.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createWriteStream } from "node:fs"
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { freePort } from "../../src/platform/ports.ts"
import { databaseUrl, kafkaBrokers, uniqueName } from "./env.ts"
import { call } from "./http.ts"

export interface ClusterProcess {
  readonly name: string
  readonly child: ChildProcess
  readonly baseUrl: string
}

export interface ClusterProcessOptions {
  /** The node's id, and the name of its log file. */
  readonly name: string
  /** Shared by the cluster's processes: its bootstrap.json and every process's log. */
  readonly dataDir: string
  readonly schema: string
  /** The Kafka topic prefix. */
  readonly prefix: string
  readonly partitions: number
  /** More environment, over the cluster's. */
  readonly env?: Record<string, string>
  /** How long it may take to serve (default 60 s). */
  readonly startTimeoutMs?: number
}

/** The cluster's processes' Kafka session timeout: how long a killed process keeps its partitions. */
export const KAFKA_SESSION_TIMEOUT_MS = 3_000

export interface Health {
  readonly partitions: { owned: number[]; ready: number[] }
}

export const health = async (p: ClusterProcess) => (await call(p.baseUrl, undefined, "/healthz")).body as Health

/** Probes until it answers something (a failed probe counts as no answer), or fails after `timeoutMs`. */
export const until = async <A>(what: string, probe: () => Promise<A | undefined>, timeoutMs = 60_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Starts one process and waits until it serves its health. */
export const startClusterProcess = async (options: ClusterProcessOptions): Promise<ClusterProcess> => {
  const { name, dataDir, schema, prefix, partitions } = options
  const port = await freePort()
  // appended: a process restarted under the same name goes on in the same log
  const logFile = createWriteStream(path.join(dataDir, `${name}.log`), { flags: "a" })
  const child = spawn(process.execPath, ["--import", "tsx", "bin/main.ts"], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      // vitest sets BASE_URL ("/", Vite's) in its own environment; the process names its real address
      BASE_URL: `http://127.0.0.1:${port}`,
      NODE_ID: name,
      SVC_DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      DB_SCHEMA: schema,
      KAFKA_BROKERS: kafkaBrokers.join(","),
      KAFKA_TOPIC_PREFIX: prefix,
      LOG_PARTITIONS: String(partitions),
      KAFKA_SESSION_TIMEOUT_MS: String(KAFKA_SESSION_TIMEOUT_MS),
      ...options.env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  // both into one file: neither ends it, or the other's last lines (a crash's stack) would be written after its end
  child.stdout!.pipe(logFile, { end: false })
  child.stderr!.pipe(logFile, { end: false })
  child.once("exit", () => setTimeout(() => logFile.end(), 100))
  const proc = { name, child, baseUrl: `http://127.0.0.1:${port}` }
  try {
    await until(`${name} to serve`, async () => ((await health(proc)).partitions ? true : undefined), options.startTimeoutMs)
  } catch (error) {
    proc.child.kill("SIGKILL")
    throw error
  }
  return proc
}

/** Stops processes at once, as `kill -9` does. */
export const killClusterProcesses = (procs: ReadonlyArray<ClusterProcess>) => {
  for (const p of procs) p.child.kill("SIGKILL")
}

export interface Bootstrap {
  readonly orgSlug: string
  readonly workspaceSlug: string
  readonly workspaceKey: string
  /** The Owner, who signs in with these (a person's session, where a key will not do). */
  readonly ownerEmail: string
  readonly ownerPassword: string
}

/** The keys the cluster's first process wrote when it bootstrapped the database. */
export const readBootstrap = async (dataDir: string) =>
  (await import(path.join(dataDir, "bootstrap.json"), { with: { type: "json" } })).default as Bootstrap

/** Waits until two processes split the partitions between them, each some, together all; their health then. */
export const untilSplit = (a: ClusterProcess, b: ClusterProcess, partitions: number) =>
  until("a split of the partitions", async () => {
    const [x, y] = [await health(a), await health(b)]
    const split = x.partitions.ready.length > 0 && y.partitions.ready.length > 0 && x.partitions.ready.length + y.partitions.ready.length === partitions
    return split ? ([x, y] as const) : undefined
  })

export interface TwoProcessCluster {
  readonly schema: string
  /** The Kafka topic prefix. */
  readonly prefix: string
  readonly dataDir: string
  /** node-a, then node-b. */
  readonly a: ClusterProcess
  readonly b: ClusterProcess
  readonly bootstrap: Bootstrap
  /** Each process's health once they split the partitions. */
  readonly split: readonly [Health, Health]
  /** Starts a new process with the configuration of the one named (after it was killed, say); `stop` kills it too. */
  readonly restart: (name: string) => Promise<ClusterProcess>
  /** Kills every process it started, as `kill -9` does. */
  readonly stop: () => void
}

/**
 * A fresh schema, topic prefix and data dir (`${tmpdir}/${dirPrefix}…`); node-a, then node-b,
 * started there; the bootstrap keys; and a wait until the two split the partitions. On failure
 * it kills what it started.
 */
export const startTwoProcessCluster = async (options: {
  readonly partitions: number
  readonly dirPrefix: string
  /** More environment for every process (restarted ones too). */
  readonly env?: Record<string, string>
  /** How long each process may take to serve (default 60 s). */
  readonly startTimeoutMs?: number
}): Promise<TwoProcessCluster> => {
  const { partitions } = options
  const schema = uniqueName("t")
  const prefix = uniqueName("t")
  const dataDir = await mkdtemp(path.join(tmpdir(), options.dirPrefix))
  const procs: ClusterProcess[] = []
  try {
    const start = async (name: string) => {
      const proc = await startClusterProcess({ name, dataDir, schema, prefix, partitions, env: options.env, startTimeoutMs: options.startTimeoutMs })
      procs.push(proc)
      return proc
    }
    const a = await start("node-a")
    const b = await start("node-b")
    const bootstrap = await readBootstrap(dataDir)
    const split = await untilSplit(a, b, partitions)
    return { schema, prefix, dataDir, a, b, bootstrap, split, restart: start, stop: () => killClusterProcesses(procs) }
  } catch (error) {
    killClusterProcesses(procs)
    throw error
  }
}
