/**
 * In the manner of Jepsen's Kafka checks: two real processes on one Kafka cluster, 16 concurrent
 * clients creating nodes and incrementing their own counters, every request carrying an
 * Idempotency-Key and retried with it (alternating processes) until acknowledged; one process is
 * killed with `kill -9` mid-load and restarted later. The history then says: every acknowledged
 * create is readable, no key made two nodes, no counter lost or repeated an increment, and no
 * client (nor all of them) went without an acknowledgement longer than the session timeout plus
 * 5 s, across the kill and the restart.
 */
import { afterAll, describe, expect, it } from "vitest"
import { type ClusterProcess as Proc, KAFKA_SESSION_TIMEOUT_MS, startTwoProcessCluster, type TwoProcessCluster, until, untilSplit } from "../support/cluster.ts"
import { auditVerify } from "../support/cli.ts"
import { kafkaBrokers } from "../support/env.ts"
import { call } from "../support/http.ts"

const PARTITIONS = 6
const CLIENTS = 16
/** Load before the kill, between the kill and the restart (longer than the bound on resuming), and after the restarted process took partitions back. */
const BEFORE_KILL_MS = 6_000
const KILLED_MS = 10_000
const AFTER_SPLIT_MS = 4_000
/** After the load, how long an operation still unacknowledged goes on being retried with its key. */
const SETTLE_MS = 20_000
/** The pause after a refused or failed request, so that a client of a dead process does not spin. */
const BACKOFF_MS = 50
/** How long a client waits for one answer (the processes' own command timeout is 15 s) before it counts none. */
const REQUEST_TIMEOUT_MS = 20_000
/** A bound on one operation's attempts, beside its deadline. */
const MAX_ATTEMPTS = 1_000
const RESUME_BOUND_MS = KAFKA_SESSION_TIMEOUT_MS + 5_000

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * The largest gap between `from`, the sorted times after it and `to` (or the last time, when later:
 * an operation in flight at `to` counts whole); and where it began.
 */
const largestGap = (from: number, times: ReadonlyArray<number>, to: number) => {
  const after = times.filter((t) => t >= from).sort((x, y) => x - y)
  const points = [from, ...after, ...((after.at(-1) ?? from) < to ? [to] : [])]
  return points.slice(1).reduce((gap, t, i) => (t - points[i] > gap.ms ? { ms: t - points[i], at: points[i] } : gap), { ms: 0, at: from })
}

/** Runs `work` over the items, `width` at a time. */
const inParallel = async <A>(items: ReadonlyArray<A>, width: number, work: (item: A) => Promise<void>) => {
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++])
  }))
}

describe.skipIf(kafkaBrokers.length === 0)("Jepsen-style history on two processes on one Kafka cluster", () => {
  let cluster: TwoProcessCluster | undefined
  afterAll(() => cluster?.stop())

  it("keeps acknowledged creates and increments, exactly once, across kill -9 and restart", { timeout: 180_000 }, async () => {
    cluster = await startTwoProcessCluster({ partitions: PARTITIONS, dirPrefix: "svc-jepsen-" })
    const { restart, bootstrap: { orgSlug, workspaceSlug, workspaceKey } } = cluster
    // index 1 is the process killed and later restarted; clients take up the new one once it serves
    const procs: Proc[] = [cluster.a, cluster.b]
    const invoke = (p: Proc, name: string, input: unknown, idempotencyKey?: string) =>
      Promise.race([
        call(p.baseUrl, workspaceKey, `/v1/${orgSlug}/${workspaceSlug}/${name.replaceAll(".", "/")}`, input, idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
        sleep(REQUEST_TIMEOUT_MS).then(() => Promise.reject(new Error(`no answer from ${p.name} within ${REQUEST_TIMEOUT_MS} ms`)))
      ])
    const through = (proc: number, name: string, input: unknown) => async () => {
      const reply = await invoke(procs[proc], name, input)
      return reply.status === 200 ? reply.body : undefined
    }

    for (const label of ["Item", "Counter"]) {
      expect((await invoke(procs[0], "schema.define_label", { label, properties: { n: { type: "number", required: true } } })).status).toBe(200)
      for (const proc of [0, 1]) await until(`label ${label} through process ${proc}`, through(proc, "schema.get", { label }), 30_000)
    }

    const acknowledgements: Array<{ readonly client: number; readonly at: number; readonly tookMs: number; readonly failures: ReadonlyArray<string> }> = []
    let loadOver = false
    let settleBy = Number.POSITIVE_INFINITY

    /** One client's retry discipline: the same key, alternating processes, until a 200 or the settling deadline. */
    const clientOf = (client: number) => {
      let turn = client
      return async (name: string, input: unknown, key: string) => {
        const started = Date.now()
        const failures: string[] = []
        for (let attempt = 0; attempt < MAX_ATTEMPTS && Date.now() < settleBy; attempt++) {
          const sent = Date.now()
          const proc = turn++ % 2
          const reply = await invoke(procs[proc], name, input, key).catch((error: Error) => error)
          if (!(reply instanceof Error) && reply.status === 200) {
            acknowledgements.push({ client, at: Date.now(), tookMs: Date.now() - started, failures })
            return reply.body
          }
          const outcome = reply instanceof Error ? (reply.cause as { code?: string } | undefined)?.code ?? reply.message : `${reply.status} ${reply.body?.error?.reason ?? reply.body?.reason ?? ""} ${reply.body?.error?.message ?? ""}`
          failures.push(`${sent - started}+${Date.now() - sent}ms process ${proc}: ${outcome}`)
          await sleep(BACKOFF_MS)
        }
        return undefined
      }
    }

    const counters = await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        const created = await clientOf(client)("node.create", { label: "Counter", properties: { n: 0 } }, `counter-${client}`)
        expect(created?.version).toBe(1)
        // node.update reads the node's label from the read model
        for (const proc of [0, 1]) await until(`counter ${client} through process ${proc}`, through(proc, "node.get", { nodeId: created.nodeId }), 30_000)
        return created.nodeId as string
      })
    )
    acknowledgements.length = 0

    // every 200 of a create key, with the node it named
    const createdByKey = new Map<string, string[]>()
    const unacknowledged: string[] = []
    const replays = new Map<string, number>()

    const load = (client: number) => async () => {
      const acknowledged = clientOf(client)
      let increments = 0
      for (let i = 0; !loadOver; i++) {
        if (i % 2 === 0) {
          const key = `create-${client}-${i}`
          const created = await acknowledged("node.create", { label: "Item", properties: { n: i } }, key)
          if (created === undefined) {
            unacknowledged.push(key)
            return increments
          }
          createdByKey.set(key, [created.nodeId])
          // a client that lost the answer sends again: once more, through the other process
          const again = await invoke(procs[(client + i + 1) % 2], "node.create", { label: "Item", properties: { n: i } }, key).catch(() => undefined)
          if (again?.status === 200) createdByKey.get(key)!.push(again.body.nodeId)
          const outcome = again === undefined ? "no answer" : `${again.status} ${again.body?.error?.reason ?? again.body?.reason ?? ""}`
          replays.set(outcome, (replays.get(outcome) ?? 0) + 1)
        } else {
          // each increment is retried until acknowledged before the next: applied equals acknowledged
          const key = `increment-${client}-${increments + 1}`
          const updated = await acknowledged("node.update", { nodeId: counters[client], properties: { n: increments + 1 } }, key)
          if (updated === undefined) {
            unacknowledged.push(key)
            return increments
          }
          increments += 1
        }
      }
      return increments
    }

    const loadStart = Date.now()
    const clients = Promise.all(counters.map((_, client) => load(client)()))
    await sleep(BEFORE_KILL_MS)
    const killedAt = Date.now()
    procs[1].child.kill("SIGKILL")
    await sleep(KILLED_MS)
    const restartAt = Date.now()
    procs[1] = await restart("node-b")
    const servingAt = Date.now()
    await untilSplit(procs[0], procs[1], PARTITIONS)
    const splitAt = Date.now()
    await sleep(AFTER_SPLIT_MS)
    loadOver = true
    const loadEnd = Date.now()
    settleBy = loadEnd + SETTLE_MS
    const increments = await clients
    const settledAt = Date.now()

    // acknowledgements after the kill, through the restart's rebalance: each client's, and across all
    // clients during the load (after it, clients stop sending: quiet is no gap)
    const times = (client?: number) => acknowledgements.filter((a) => client === undefined || a.client === client).map((a) => a.at)
    // the bound of the issue covers the kill (until the restart) and the restart's rebalance alike
    const perClient = counters.map((_, client) => largestGap(killedAt, times(client).filter((t) => t <= restartAt), restartAt))
    const slowestClient = perClient.reduce((x, y) => (y.ms > x.ms ? y : x))
    const acrossClients = largestGap(killedAt, times().filter((t) => t <= restartAt), restartAt)
    const throughRestart = counters
      .map((_, client) => largestGap(restartAt, times(client), loadEnd))
      .reduce((x, y) => (y.ms > x.ms ? y : x))
    const creates = [...createdByKey.values()]
    console.log(JSON.stringify({
      loadStart: new Date(loadStart).toISOString(),
      kill: killedAt - loadStart,
      restart: restartAt - loadStart,
      serving: servingAt - loadStart,
      split: splitAt - loadStart,
      loadEnd: loadEnd - loadStart,
      settled: settledAt - loadEnd,
      acknowledgements: acknowledgements.length,
      creates: creates.length,
      replays: Object.fromEntries(replays),
      increments: increments.reduce((s, n) => s + n, 0),
      largestGapAcrossClients: { ms: acrossClients.ms, at: acrossClients.at - loadStart },
      largestGapPerClient: perClient.map((g) => ({ ms: g.ms, at: g.at - loadStart })),
      largestGapThroughRestart: { ms: throughRestart.ms, at: throughRestart.at - loadStart },
      unacknowledged,
      slowest: [...acknowledgements].sort((x, y) => y.tookMs - x.tookMs).slice(0, 4).map((a) => ({ ...a, at: a.at - loadStart }))
    }))

    // every operation was acknowledged in the end, so the checks below are exact
    expect.soft(unacknowledged).toEqual([])
    // acknowledgements resumed after the kill: no client, nor all of them, went quiet longer than the bound
    expect.soft(slowestClient.ms, `a client's gap from ${slowestClient.at - loadStart} ms`).toBeLessThan(RESUME_BOUND_MS)
    expect.soft(acrossClients.ms, `the gap across all clients from ${acrossClients.at - loadStart} ms`).toBeLessThan(RESUME_BOUND_MS)
    expect.soft(throughRestart.ms, `a client's gap through the restart from ${throughRestart.at - loadStart} ms`).toBeLessThan(RESUME_BOUND_MS)

    // a key's acknowledgements all name one node
    for (const [key, ids] of createdByKey) expect.soft(new Set(ids).size, `${key} named ${ids.join(", ")}`).toBe(1)
    const acknowledgedIds = new Set(creates.map((ids) => ids[0]))

    // no key made two nodes: the label holds exactly the acknowledged nodes (an unacknowledged create would be extra)
    const listed = await until("the label's nodes to hold every acknowledged create", async () => {
      const ids: string[] = []
      let cursor: string | undefined
      for (let page = 0; page < 1_000; page++) {
        const reply = await invoke(procs[page % 2], "node.list", { label: "Item", limit: 200, ...(cursor ? { cursor } : {}) })
        if (reply.status !== 200) return undefined
        ids.push(...reply.body.nodes.map((n: { nodeId: string }) => n.nodeId))
        cursor = reply.body.nextCursor ?? undefined
        if (cursor === undefined) break
      }
      const present = new Set(ids)
      return [...acknowledgedIds].every((id) => present.has(id)) ? ids : undefined
    }, 30_000).catch(() => undefined)
    expect.soft(listed, "every acknowledged create listed").toBeDefined()
    expect.soft(listed?.length).toBe(acknowledgedIds.size)
    expect.soft(new Set(listed).size).toBe(listed?.length)

    // every acknowledged create is readable through either process
    const unreadable: string[] = []
    await inParallel([...acknowledgedIds], CLIENTS, async (nodeId) => {
      for (const proc of [0, 1]) {
        const read = await until(`${nodeId} through process ${proc}`, through(proc, "node.get", { nodeId }), 10_000).catch(() => undefined)
        if (read === undefined) unreadable.push(`${nodeId} through process ${proc}`)
      }
    })
    expect.soft(unreadable).toEqual([])

    // each counter: created at version 1, then one version per acknowledged increment, none lost, none twice
    const versions = await Promise.all(counters.map(async (nodeId, client) => {
      const read = await until(`counter ${client} at ${increments[client]}`, async () => {
        const node = await through(client % 2, "node.get", { nodeId })()
        return node?.properties.n === increments[client] ? node : undefined
      }, 30_000).catch(() => through(client % 2, "node.get", { nodeId })())
      return { client, acknowledged: increments[client], n: read?.properties.n, version: read?.version }
    }))
    expect.soft(versions).toEqual(increments.map((n, client) => ({ client, acknowledged: n, n, version: 1 + n })))

    // every partition's hash chain holds through the kill and the restart's handovers
    const audit = await auditVerify({ schema: cluster!.schema, prefix: cluster!.prefix, partitions: PARTITIONS })
    expect.soft(audit.code, audit.stdout + audit.stderr).toBe(0)
  })
})
