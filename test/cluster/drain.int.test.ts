/**
 * A planned stop, as an operator makes one: a real process of the platform (`bin/main.ts`) gets
 * SIGTERM.
 * - Under load from 16 clients that do not retry, sent through a load balancer that delists the
 *   node once its readiness is false: every request it took before the signal is answered 200; one
 *   sent after it is answered 200 or refused 503 `unavailable` (`draining`) with Retry-After, never
 *   a 500, a lost socket or nothing listening; it exits 0, and every acknowledged write is there
 *   when a node starts again on the same data.
 * - During a streaming turn: `/readyz` is 503 and `/healthz` 200 while the node drains, new
 *   requests are refused, and the turn finishes within DRAIN_TIMEOUT_MS; past the bound its stream
 *   ends with `engine_unavailable` then `done`, and its run is recorded failed, never left running.
 * - With an approved call queued for a place (its resolve answered "queued"): the node runs it and
 *   stops only once its run has ended.
 */
import { mkdtemp, readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import postgres from "postgres"
import { afterAll, describe, expect, it } from "vitest"
import { type ClusterProcess, readBootstrap, startClusterProcess } from "../support/cluster.ts"
import { streamChat } from "../support/chat.ts"
import { databaseUrl, uniqueName } from "../support/env.ts"
import { call } from "../support/http.ts"
import type { TestNode } from "../support/platform.ts"

const CLIENTS = 16
const PARTITIONS = 4
const LOAD_BEFORE_SIGNAL_MS = 2_000
/** How often the load balancer asks a node's readiness. */
const PROBE_EVERY_MS = 200
/**
 * A request sent just before the signal may reach the node just after it, and is then refused as
 * one that came after (CI, once: sent before the signal, answered 503 `draining`); one sent this
 * long before it was taken before it.
 */
const IN_FLIGHT_MS = 250

interface Answer {
  readonly sent: number
  readonly status: number
  /** Of a request nothing answered: why (`ECONNREFUSED`: nothing listened, so nothing took it). */
  readonly lost?: string
  readonly code?: string
  readonly reason?: string
  readonly retryAfter?: string | null
  readonly nodeId?: string
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const started: Array<ClusterProcess> = []
afterAll(() => {
  for (const p of started) p.child.kill("SIGKILL")
})

const start = async (env: Record<string, string> = {}, dataDir?: string, schema?: string) => {
  const dir = dataDir ?? (await mkdtemp(path.join(tmpdir(), "svc-drain-")))
  const options = { name: "node-a", dataDir: dir, schema: schema ?? uniqueName("t"), prefix: uniqueName("t"), partitions: PARTITIONS, env: { KAFKA_BROKERS: "", ...env } }
  const proc = await startClusterProcess(options)
  started.push(proc)
  const exited = new Promise<number | null>((resolve) => proc.child.once("exit", resolve))
  return { proc, exited, dataDir: dir, schema: options.schema, ...(await readBootstrap(dir)) }
}

const createItem = async (baseUrl: string, key: string, org: string, ws: string, n: number): Promise<Answer> => {
  const sent = Date.now()
  const response = await fetch(`${baseUrl}/v1/${org}/${ws}/node/create`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ label: "Item", properties: { n } })
  }).catch((error: Error & { cause?: { code?: string } }) => error)
  if (response instanceof Error) return { sent, status: 0, lost: response.cause?.code ?? response.message }
  const body = (await response.json().catch(() => ({}))) as { error?: { code?: string; reason?: string }; nodeId?: string }
  return { sent, status: response.status, code: body.error?.code, reason: body.error?.reason, retryAfter: response.headers.get("retry-after"), nodeId: body.nodeId }
}

const defineItem = async (baseUrl: string, key: string, org: string, ws: string) =>
  expect((await call(baseUrl, key, `/v1/${org}/${ws}/schema/define_label`, { label: "Item", properties: { n: { type: "number", required: true } } })).status).toBe(200)

const expectDrainRefusal = (a: Answer) => expect(a).toMatchObject({ status: 503, code: "unavailable", reason: "draining", retryAfter: "1" })

describe("a node stopped with SIGTERM", () => {
  it("under load: what it took is answered 200, what came after is refused 503 draining until it is delisted, and it exits 0 with every acknowledged write kept", { timeout: 120_000 }, async () => {
    const node = await start()
    const { proc, workspaceKey: key, orgSlug: org, workspaceSlug: ws } = node
    await defineItem(proc.baseUrl, key, org, ws)
    expect(await call(proc.baseUrl, undefined, "/readyz")).toMatchObject({ status: 200, body: { status: "ready", nodeId: "node-a" } })

    const answers: Answer[] = []
    let delisted = false
    const clients = Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let i = 0; !delisted; i++) answers.push(await createItem(proc.baseUrl, key, org, ws, client * 100_000 + i))
      })
    )
    await sleep(LOAD_BEFORE_SIGNAL_MS)
    const signalled = Date.now()
    proc.child.kill("SIGTERM")
    // the load balancer asks the node's readiness now and then, and delists it once it is false
    for (;;) {
      await sleep(PROBE_EVERY_MS)
      const ready = await call(proc.baseUrl, undefined, "/readyz")
      if (ready.status === 200) continue
      expect(ready).toMatchObject({ status: 503, body: { error: { code: "unavailable", reason: "draining" } } })
      break
    }
    delisted = true
    await clients
    expect(await node.exited).toBe(0)

    const before = answers.filter((a) => a.sent < signalled - IN_FLIGHT_MS)
    expect(before.length).toBeGreaterThan(CLIENTS)
    expect(before.filter((a) => a.status !== 200)).toEqual([])
    for (const a of answers.filter((a) => a.status !== 200)) expectDrainRefusal(a)

    // every acknowledged create is there for the next node on the same data
    const again = await start({}, node.dataDir, node.schema)
    const acked = answers.filter((a) => a.status === 200).map((a) => a.nodeId!).sort()
    const listed: string[] = []
    for (let cursor: string | undefined; ;) {
      const page = await call(again.proc.baseUrl, key, `/v1/${org}/${ws}/node/list`, { label: "Item", limit: 200, ...(cursor === undefined ? {} : { cursor }) })
      expect(page.status).toBe(200)
      listed.push(...page.body.nodes.map((n: { nodeId: string }) => n.nodeId))
      if (page.body.nextCursor === null) break
      cursor = page.body.nextCursor
    }
    expect(listed.sort()).toEqual(acked)
    again.proc.child.kill("SIGTERM")
    expect(await again.exited).toBe(0)
  })

  /** A slow turn (the offline model waits between chunks) on a node that then gets SIGTERM; what its client and the node answered meanwhile. */
  const turnThroughStop = async (drainTimeoutMs: number, content: string) => {
    const node = await start({ DRAIN_TIMEOUT_MS: String(drainTimeoutMs) })
    const { proc, workspaceKey: key, orgSlug: org, workspaceSlug: ws } = node
    await defineItem(proc.baseUrl, key, org, ws)
    const client = { baseUrl: proc.baseUrl, bootstrap: { workspaceKey: key, orgSlug: org, workspaceSlug: ws } } as unknown as TestNode
    const events: Array<any> = []
    const streaming = streamChat(client, { content }, { onEvent: (e) => events.push(e) })
    while (!events.some((e) => e.type === "text")) await sleep(20)
    const runId = events.find((e) => e.runId !== undefined)?.runId as string
    proc.child.kill("SIGTERM")
    // while the turn runs, the node is alive and not ready, and refuses new requests
    let ready = await call(proc.baseUrl, undefined, "/readyz")
    while (ready.status === 200) ready = await call(proc.baseUrl, undefined, "/readyz")
    expect(ready).toMatchObject({ status: 503, body: { error: { code: "unavailable", reason: "draining" } } })
    expect((await call(proc.baseUrl, undefined, "/healthz")).status).toBe(200)
    expectDrainRefusal(await createItem(proc.baseUrl, key, org, ws, 1))
    const turn = await streaming
    expect(await node.exited).toBe(0)
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
    try {
      const [run] = await sql`select status, error from ${sql(`${node.schema}.runs`)} where run_id = ${runId}`
      return { turn, run }
    } finally {
      await sql.end()
    }
  }

  it("during a streaming turn: the node is not ready and refuses new requests, and the turn finishes within the bound", { timeout: 120_000 }, async () => {
    const { turn, run } = await turnThroughStop(20_000, "/slow 100\n/long 45")
    expect(turn.events.filter((e) => e.type === "error")).toEqual([])
    expect(turn.done).toMatchObject({ stopped: false })
    expect(turn.done.reply.split(" ")).toHaveLength(45)
    expect(run.status).toBe("finished")
  })

  it("past the bound: the turn's stream ends with engine_unavailable then done, and its run is recorded failed", { timeout: 120_000 }, async () => {
    const { turn, run } = await turnThroughStop(1_000, "/slow 200\n/long 300")
    const errors = turn.events.filter((e) => e.type === "error")
    expect(errors).toEqual([expect.objectContaining({ code: "engine_unavailable" })])
    expect(turn.sequence.at(-1)).toMatchObject({ kind: "named", event: "done", data: "[DONE]" })
    // numbered 1, 2, ... to the last, as every turn's stream is (docs/chat.md): a client that lost it can resume
    const ids = turn.sequence.flatMap((e) => (e.kind === "comment" ? [] : [Number(e.id)]))
    expect(ids).toEqual(ids.map((_, i) => i + 1))
    expect(run).toMatchObject({ status: "failed", error: { code: "engine_unavailable" } })
  })

  it("with an approved call queued behind a running turn: the node runs it, and stops only once its run has ended", { timeout: 120_000 }, async () => {
    // one running place, taken by a slow turn; the resolve answers at once ("queued")
    const node = await start({ DRAIN_TIMEOUT_MS: "20000", ADMISSION_MAX_TURNS_RUNNING: "1", APPROVAL_ANSWER_WAIT_MS: "0" })
    const { proc, workspaceKey: key, orgSlug: org, workspaceSlug: ws } = node
    await defineItem(proc.baseUrl, key, org, ws)
    const target = (await createItem(proc.baseUrl, key, org, ws, 1)).nodeId!
    const client = { baseUrl: proc.baseUrl, bootstrap: { workspaceKey: key, orgSlug: org, workspaceSlug: ws } } as unknown as TestNode
    const parking = await streamChat(client, { content: `/tool node__delete {"nodeId":"${target}"}` })
    const card = parking.events.find((e) => e.type === "approval-required")
    const events: Array<any> = []
    // still running a second after the signal, once the node has seen no request for its quiet second
    const slow = streamChat(client, { content: "/slow 100\n/long 40" }, { onEvent: (e) => events.push(e) })
    while (!events.some((e) => e.type === "text")) await sleep(20)
    const resolved = await call(proc.baseUrl, key, `/v1/${org}/${ws}/agent/approvals/resolve`, { approvalId: card.approvalId, decision: "approved" })
    expect(resolved.body.execution).toMatchObject({ status: "queued" })
    proc.child.kill("SIGTERM")
    expect((await slow).done).toMatchObject({ stopped: false })
    expect(await node.exited).toBe(0)
    // its run ended before the node said it stops (its log's time), and the call ran
    const stopping = (await readFile(path.join(node.dataDir, "node-a.log"), "utf8")).split("\n").flatMap((line) => {
      try {
        const entry = JSON.parse(line)
        return entry.message === "stopping" ? [Date.parse(entry.time)] : []
      } catch {
        return []
      }
    })
    expect(stopping).toHaveLength(1)
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
    try {
      const [run] = await sql`select status, ended_at from ${sql(`${node.schema}.runs`)} where run_id = ${resolved.body.execution.runId}`
      expect(run.status).toBe("finished")
      expect((run.ended_at as Date).getTime()).toBeLessThanOrEqual(stopping[0]!)
      expect(await sql`select 1 from ${sql(`${node.schema}.nodes`)} where node_id = ${target}`).toHaveLength(0)
    } finally {
      await sql.end()
    }
  })
})
