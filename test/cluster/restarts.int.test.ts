/**
 * A node rides through its dependencies' restarts, as an operator sees it: a real process of the
 * platform (`bin/main.ts`) under load from 8 clients creating nodes, each request carrying an
 * Idempotency-Key and retried with it until acknowledged. Postgres (a server of the test's own) or
 * the Kafka broker (likewise) stops mid-load and starts again on the same port. The history then
 * says: the process is the one started (no crash, no restart), every answer while the dependency
 * was down was 503 `unavailable` with Retry-After, the node answered again within its bound of the
 * dependency's return, and every acknowledged create is readable exactly once.
 *
 * Also: the node carries on when its pool's backends are terminated under it, and a node stopped
 * with SIGINT mid-load leaves read models that `replay --compare` finds the same as the log's.
 */
import { execFile } from "node:child_process"
import { mkdtemp } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import postgres from "postgres"
import { afterAll, describe, expect, it } from "vitest"
import { freePort } from "../../src/platform/ports.ts"
import { type ClusterProcess, health, readBootstrap, startClusterProcess, until } from "../support/cluster.ts"
import { databaseUrl, kafkaBrokers, uniqueName } from "../support/env.ts"
import { call } from "../support/http.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { type PostgresServer, startPostgresServer } from "../support/postgresServer.ts"

const CLIENTS = 8
const PARTITIONS = 4
const BEFORE_FAULT_MS = 3_000
const DOWN_MS = 3_000
const AFTER_RETURN_MS = 12_000
/** Spec of issue 21: answering again within 5 s of Postgres's return, 10 s of the broker's. */
const POSTGRES_BOUND_MS = 5_000
const BROKER_BOUND_MS = 10_000
/** Answering again after the last of five terminations of the node's connections (Postgres there throughout). */
const TERMINATED_BOUND_MS = 3_000
const BACKOFF_MS = 50
/** Requests sent while the dependency is away, apart from the clients: the refusals the run must hold. */
const PROBE_EVERY_MS = 250
/** While Postgres is away, a request is refused once a query of its fails, or a wait of its reads for the projection ends at the projection's next failure (at most a second apart). */
const REFUSED_WITHIN_MS = 2_000
/**
 * A request in flight when a dependency goes may wait for its idempotency record, its command and
 * its audit record in turn, each bounded by the node's command timeout (15 s), before its 503.
 */
const REQUEST_TIMEOUT_MS = 60_000

/** Whether nothing listens on the loopback port now. */
const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer()
    probe.once("error", () => resolve(false))
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)))
  })

const execFileAsync = promisify(execFile)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const root = path.resolve(import.meta.dirname, "../..")

interface Answer {
  /** When the request was sent, and when its answer came (or it failed). */
  readonly at: number
  readonly done: number
  readonly status: number
  readonly code?: string
  readonly retryAfter?: string | null
}

/**
 * 8 clients creating nodes with Idempotency-Keys, each retried until acknowledged, until `stop`
 * (`abandon`: what is unacknowledged then is given up, for a node that is gone).
 */
const createLoad = (baseUrl: () => string, key: string, org: string, ws: string) => {
  const answers: Answer[] = []
  const acked = new Map<string, Set<string>>()
  let over = false
  let abandoned = false
  /** One request; whether it was acknowledged. */
  const attempt = async (idempotencyKey: string, n: number) => {
    const at = Date.now()
    const response = await fetch(`${baseUrl()}/v1/${org}/${ws}/node/create`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "idempotency-key": idempotencyKey },
      body: JSON.stringify({ label: "Item", properties: { n } }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
    }).catch(() => undefined)
    if (response === undefined) {
      answers.push({ at, done: Date.now(), status: 0 })
      return false
    }
    const body = (await response.json().catch(() => undefined)) as { error?: { code?: string }; nodeId?: string } | undefined
    answers.push({ at, done: Date.now(), status: response.status, code: body?.error?.code, retryAfter: response.headers.get("retry-after") })
    if (response.status !== 200) return false
    acked.set(idempotencyKey, (acked.get(idempotencyKey) ?? new Set()).add(body!.nodeId!))
    return true
  }
  const create = async (idempotencyKey: string, n: number) => {
    while (!abandoned && !(await attempt(idempotencyKey, n))) await sleep(BACKOFF_MS)
  }
  const clients = Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
    for (let i = 0; !over; i++) await create(`c${client}-${i}`, i)
  }))
  return {
    answers,
    acked,
    /**
     * Creates started now and then until `over`, each without waiting for the clients' (which may
     * all be held by the outage); each is retried with its Idempotency-Key until acknowledged, as
     * the clients' are, since a refused one may have been written.
     */
    probe: async (every: number, over: () => boolean) => {
      const sent: Array<Promise<void>> = []
      for (let i = 0; !over(); i++) {
        sent.push(create(`probe-${i}`, i))
        await sleep(every)
      }
      await Promise.all(sent)
    },
    stop: async (abandon = false) => {
      over = true
      abandoned = abandon
      await clients
    }
  }
}

/** Every acknowledged key named one node, each readable, and the label holds exactly those. */
const expectExactlyOnce = async (baseUrl: string, key: string, org: string, ws: string, acked: ReadonlyMap<string, ReadonlySet<string>>) => {
  for (const [idempotencyKey, ids] of acked) expect([idempotencyKey, ids.size]).toEqual([idempotencyKey, 1])
  const expected = [...acked.values()].map((ids) => [...ids][0]).sort()
  const listed: string[] = []
  for (let cursor: string | undefined; ;) {
    const page = await call(baseUrl, key, `/v1/${org}/${ws}/node/list`, { label: "Item", limit: 200, ...(cursor === undefined ? {} : { cursor }) })
    expect(page.status).toBe(200)
    listed.push(...page.body.nodes.map((n: { nodeId: string }) => n.nodeId))
    if (page.body.nextCursor === null) break
    cursor = page.body.nextCursor
  }
  expect(listed.sort()).toEqual(expected)
}

/**
 * The first acknowledgement at or after `from`, in ms after it, by `moment`: when its request was
 * sent (`at`: a request sent after a dependency's return was acknowledged), or when its answer
 * came (`done`: the node acknowledged anything again, a request it held through the fault included).
 */
const answeredAgainAfter = (answers: ReadonlyArray<Answer>, from: number, moment: "at" | "done") =>
  Math.min(...answers.filter((a) => a.status === 200 && a[moment] >= from).map((a) => a[moment])) - from

/**
 * Every refusal in the run was the spec's: 503 `unavailable` with Retry-After, never a 500, a
 * reset socket or no answer; `refusedWhileDown`: and requests sent while the dependency was away
 * were refused within REFUSED_WITHIN_MS, not held until its return (a broker's outage may instead
 * be waited out within the command timeout).
 */
const expectOnlyUnavailable = (answers: ReadonlyArray<Answer>, down: number, back: number, refusedWhileDown: boolean) => {
  const refused = answers.filter((a) => a.status !== 200)
  // any other answer is shown with when it was sent and answered, in ms from the outage's start
  const other = refused.filter((a) => !(a.status === 503 && a.code === "unavailable" && a.retryAfter === "1"))
  expect(other.map((a) => ({ ...a, at: a.at - down, done: a.done - down }))).toEqual([])
  if (!refusedWhileDown) return
  // sent while it was away, early enough to be refused before its return: none was held until then
  const sentWhileDown = answers.filter((a) => a.at >= down && a.at < back - REFUSED_WITHIN_MS)
  expect(sentWhileDown.length).toBeGreaterThan(0)
  expect(sentWhileDown.filter((a) => a.done >= back).map((a) => ({ ...a, at: a.at - down, done: a.done - down }))).toEqual([])
}

/**
 * A node under load while a dependency stops, stays away `DOWN_MS` and starts again: the load's
 * answers, when the dependency went and when it was back; the node was never restarted.
 */
const loadThroughOutage = async (proc: ClusterProcess, key: string, org: string, ws: string, dependency: { readonly stop: () => void | Promise<void>; readonly start: () => void | Promise<void> }) => {
  const pid = proc.child.pid
  await defineItem(proc, key, org, ws)
  const load = createLoad(() => proc.baseUrl, key, org, ws)
  await sleep(BEFORE_FAULT_MS)
  // stopping takes until the dependency is down, which under load can take most of DOWN_MS: the
  // outage counts from then, so the probes always meet it
  await dependency.stop()
  const down = Date.now()
  const probes = load.probe(PROBE_EVERY_MS, () => Date.now() - down > DOWN_MS - PROBE_EVERY_MS)
  await sleep(DOWN_MS)
  await dependency.start()
  const back = Date.now()
  await sleep(AFTER_RETURN_MS)
  await Promise.all([probes, load.stop()])
  expect(proc.child.exitCode).toBe(null)
  expect(proc.child.pid).toBe(pid)
  return { ...load, down, back }
}

const defineItem = async (p: ClusterProcess, key: string, org: string, ws: string) => {
  const defined = await call(p.baseUrl, key, `/v1/${org}/${ws}/schema/define_label`, { label: "Item", properties: { n: { type: "number", required: true } } })
  expect(defined.status).toBe(200)
}

const started: Array<{ readonly stop: () => void }> = []
afterAll(() => {
  for (const s of started.reverse()) s.stop()
})

const startProcess = async (env: Record<string, string>, dirPrefix: string) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), dirPrefix))
  const schema = uniqueName("t")
  const proc = await startClusterProcess({ name: "node-a", dataDir, schema, prefix: uniqueName("t"), partitions: PARTITIONS, env })
  started.push({ stop: () => proc.child.kill("SIGKILL") })
  const bootstrap = await readBootstrap(dataDir)
  return { proc, dataDir, schema, ...bootstrap }
}

describe("a Postgres restart under load", () => {
  let pg: PostgresServer | undefined
  afterAll(() => pg?.remove())

  // the embedded log lives in Postgres too: the harder case; on Kafka, the operator's setup
  const modes: Array<[string, string]> = [["the embedded log", ""], ...(kafkaBrokers.length > 0 ? [["Kafka", kafkaBrokers.join(",")] as [string, string]] : [])]
  it.each(modes)("on %s: the node survives, answers 503 with Retry-After while it is down, and again within 5 s; acknowledged writes exactly once", { timeout: 120_000 }, async (_, brokers) => {
    pg ??= await startPostgresServer()
    const { proc, orgSlug: org, workspaceSlug: ws, workspaceKey: key } = await startProcess({ DATABASE_URL: pg.url, KAFKA_BROKERS: brokers }, "svc-pg-restart-")
    const load = await loadThroughOutage(proc, key, org, ws, pg)
    const { down, back } = load
    expectOnlyUnavailable(load.answers, down, back, true)
    const again = answeredAgainAfter(load.answers, back, "at")
    console.log(`Postgres on ${brokers === "" ? "the embedded log" : "Kafka"}: answering again ${again} ms after its return`)
    expect(again).toBeLessThanOrEqual(POSTGRES_BOUND_MS)
    await expectExactlyOnce(proc.baseUrl, key, org, ws, load.acked)
  })
})

describe.skipIf(kafkaBrokers.length === 0)("a Kafka broker restart under load", () => {
  const broker = { port: 0, dir: "" }
  // not blocking this process: the clients go on while the broker stops and starts (10 to 20 s on
  // a loaded machine), as real ones would, and the connections they keep stay in use
  const kafka = async (action: "start" | "stop") => {
    await execFileAsync("bash", [path.join(root, "scripts/kafka.sh"), action], {
      env: { ...process.env, SVC_KAFKA_PORT: String(broker.port), SVC_KAFKA_DIR: broker.dir },
      timeout: 120_000
    })
  }
  afterAll(async () => {
    if (broker.dir !== "") await kafka("stop")
  })

  it("the node survives, owns its partitions again and answers within 10 s of the broker's return; acknowledged writes exactly once", { timeout: 180_000 }, async () => {
    // the broker's controller listens on the next port
    do broker.port = await freePort()
    while (!(await portFree(broker.port + 1)))
    broker.dir = await mkdtemp(path.join(tmpdir(), "svc-kafka-restart-"))
    await kafka("start")
    const { proc, orgSlug: org, workspaceSlug: ws, workspaceKey: key } = await startProcess({ KAFKA_BROKERS: `127.0.0.1:${broker.port}`, DATABASE_URL: databaseUrl }, "svc-kafka-restart-")
    const load = await loadThroughOutage(proc, key, org, ws, { stop: () => kafka("stop"), start: () => kafka("start") })
    const { down, back } = load
    expectOnlyUnavailable(load.answers, down, back, false)
    const again = answeredAgainAfter(load.answers, back, "at")
    console.log(`Kafka: answering again ${again} ms after the broker's return`)
    expect(again).toBeLessThanOrEqual(BROKER_BOUND_MS)
    expect((await health(proc)).partitions).toMatchObject({ owned: [0, 1, 2, 3], ready: [0, 1, 2, 3] })
    await expectExactlyOnce(proc.baseUrl, key, org, ws, load.acked)
  })
})

describe("the node's Postgres connections terminated under it", () => {
  let node: TestNode | undefined
  afterAll(() => node?.stop())

  it("carries on: every create acknowledged, exactly once", { timeout: 60_000 }, async () => {
    node = await startTestNode()
    const { orgSlug: org, workspaceSlug: ws, workspaceKey: key } = node.bootstrap
    const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
    try {
      const terminate = async () =>
        (await admin`select pg_terminate_backend(pid) as done from pg_stat_activity where application_name = ${`svc ${node!.config.nodeId}`}`).length
      const defined = await call(node.baseUrl, key, `/v1/${org}/${ws}/schema/define_label`, { label: "Item", properties: { n: { type: "number", required: true } } })
      expect(defined.status).toBe(200)
      const load = createLoad(() => node!.baseUrl, key, org, ws)
      // the load is under way before its connections go: each client had a create acknowledged
      await until("each client acknowledged", async () => (load.acked.size >= CLIENTS ? true : undefined))
      let terminated = 0
      for (let i = 0; i < 5; i++) {
        await sleep(500)
        terminated += await terminate()
      }
      const lastTerminated = Date.now()
      await sleep(1_500)
      await load.stop()
      // the node had connections to lose, lost them, and answered after each time
      expect(terminated).toBeGreaterThanOrEqual(5)
      const again = answeredAgainAfter(load.answers, lastTerminated, "done")
      console.log(`Postgres connections terminated: answering again ${again} ms after the last termination`, new Date(lastTerminated).toISOString())
      // a pool's ten connections reopened take up to a second on a loaded 2-core machine, and a create then
      expect(again).toBeLessThan(TERMINATED_BOUND_MS)
      expect(load.answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([])
      await expectExactlyOnce(node.baseUrl, key, org, ws, load.acked)
    } finally {
      await admin.end()
    }
  })
})

describe("replay --compare after a node is stopped with SIGINT mid-load", () => {
  const cli = (env: Record<string, string>) =>
    new Promise<{ code: number; stdout: string }>((resolve) =>
      execFile(path.join(root, "node_modules/.bin/tsx"), ["bin/cli.ts", "replay", "--compare"], { cwd: root, timeout: 120_000, env: { ...process.env, ...env } }, (error, stdout) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout }))
    )

  it.each<[string, string]>([["the embedded default", ""], ["Postgres", databaseUrl]])("on %s: every table the same", { timeout: 180_000 }, async (_, url) => {
    const { proc, dataDir, schema, orgSlug: org, workspaceSlug: ws, workspaceKey: key } = await startProcess({ DATABASE_URL: url, KAFKA_BROKERS: "" }, "svc-sigint-")
    await defineItem(proc, key, org, ws)
    const load = createLoad(() => proc.baseUrl, key, org, ws)
    await sleep(2_000)
    const exited = new Promise<number | null>((resolve) => proc.child.once("exit", resolve))
    proc.child.kill("SIGINT")
    expect(await exited).toBe(0)
    // the clients see the node go: what they were sending gets no answer
    await load.stop(true)
    expect(load.acked.size).toBeGreaterThan(0)

    const replayed = await cli({ SVC_DATA_DIR: dataDir, DATABASE_URL: url, DB_SCHEMA: schema, LOG_PARTITIONS: String(PARTITIONS), KAFKA_BROKERS: "" })
    expect(replayed.stdout).not.toContain("DIFFERENT")
    expect(replayed.stdout).toMatch(/same {2}actor_state/)
    expect(replayed.code).toBe(0)
  })
})
