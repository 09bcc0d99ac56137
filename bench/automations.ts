/**
 * `npm run bench:automations`: how fast automations follow the writes they watch. One enabled
 * automation watches `node.created` of the label `Ticket` with a one-step `tool` playbook
 * (`node.get` of the created node); BENCH_CREATES (1,000) creates go to
 * `POST /v1/{org}/{workspace}/node/create` with BENCH_CONCURRENCY (32) in flight. Measured: runs
 * started per second (from the first create sent to the last run started), and p50/p99 from each
 * create's answer to its run's start (the automation admitting it) and end (its step recorded),
 * read from the runs' own times (`automation_runs`, the node's clock, the same process's). First
 * the same creates with no automation watching, for what the runs add to a create's cost.
 *
 * The automation is created as the bootstrap Owner, signed in (a person: enabled at once, spec
 * 3.4). The node runs in this process on the embedded log unless KAFKA_BROKERS is set, on PGlite
 * unless DATABASE_URL is set; the load is sent from this process too (the node's event loop shares
 * it: figures are a floor). Target on this machine: ≥ 200 runs/s, p99 to start ≤ 250 ms.
 */
import http from "node:http"
import { brokers, machine, progressOf, row, runBench, startNode } from "./harness.ts"

const CREATES = Number(process.env.BENCH_CREATES ?? 1000)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const RUNS_TIMEOUT_MS = 120_000

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })

const request = (port: number, path: string, headers: Record<string, string>, body: unknown) =>
  new Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    const payload = JSON.stringify(body)
    const req = http.request(
      { host: "127.0.0.1", port, path, method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload), ...headers } },
      (res) => {
        const chunks: Buffer[] = []
        res.on("data", (c) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || "null"), headers: res.headers }))
      }
    )
    req.on("error", reject)
    req.end(payload)
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

runBench(import.meta.url, {
  load: async () => undefined,
  bench: async (bench) => {
    const progress = progressOf("automations")
    const node = await startNode(bench)
    const { orgSlug, workspaceSlug, workspaceKey, ownerEmail, ownerPassword } = node.bootstrap
    const place = `/v1/${orgSlug}/${workspaceSlug}`
    const key = { authorization: `Bearer ${workspaceKey}` }
    const signIn = await request(node.port, "/v1/auth/sign-in", {}, { email: ownerEmail, password: ownerPassword })
    const cookie = { cookie: String(signIn.headers["set-cookie"] ?? "").split(";")[0] }
    const must = (reply: { status: number; body: any }, what: string) => {
      if (reply.status !== 200) throw new Error(`${what}: ${reply.status} ${JSON.stringify(reply.body)}`)
      return reply.body
    }
    must(await request(node.port, `${place}/schema/define_label`, key, { label: "Ticket", properties: { title: { type: "string" }, priority: { type: "enum", values: ["low", "high"] } } }), "define label")

    /** Sends `count` creates, `CONCURRENCY` in flight; the answer time of each node created. */
    const createTickets = async (count: number, title: string) => {
      const answered = new Map<string, number>()
      let next = 0
      const worker = async () => {
        while (next < count) {
          const i = next++
          const created = must(await request(node.port, `${place}/node/create`, key, { label: "Ticket", properties: { title: `${title} ${i}`, priority: i % 2 === 0 ? "high" : "low" } }), "create node")
          answered.set(created.nodeId, Date.now())
        }
      }
      await Promise.all(Array.from({ length: CONCURRENCY }, worker))
      return answered
    }

    // the same creates with no automation watching first: what the runs add to a create's cost
    const unwatchedStart = Date.now()
    await createTickets(CREATES, "unwatched")
    const unwatchedCreates = Math.round((CREATES / (Date.now() - unwatchedStart)) * 1000)
    progress(`${CREATES} creates with no automation: ${unwatchedCreates}/s`)

    const automation = must(
      await request(node.port, `${place}/automation/create`, cookie, {
        name: "read each new ticket",
        trigger: { type: "event", entityType: "Ticket", eventType: "node.created" },
        steps: [{ name: "read", stepType: "tool", config: { capability: "node.get", input: { nodeId: "{{trigger.nodeId}}" } } }],
        enabled: true
      }),
      "create automation"
    )
    progress(`automation ${automation.automationId} enabled; ${CREATES} creates, ${CONCURRENCY} in flight`)
    const firstSent = Date.now()
    const answered = await createTickets(CREATES, "ticket")
    const lastAnswer = Date.now()
    progress(`creates answered in ${lastAnswer - firstSent} ms; waiting for the runs`)

    const sql = node.db.sql
    const runs = sql(`${node.db.schema}.automation_runs`)
    let rows: ReadonlyArray<{ node_id: string; status: string; started_at: Date; ended_at: Date | null }> = []
    const deadline = Date.now() + RUNS_TIMEOUT_MS
    for (;;) {
      rows = await sql`select trigger->>'nodeId' as node_id, status, started_at, ended_at from ${runs} where automation_id = ${automation.automationId}`
      if (rows.length >= CREATES && rows.every((r) => r.ended_at !== null)) break
      if (Date.now() > deadline) throw new Error(`only ${rows.filter((r) => r.ended_at !== null).length} of ${CREATES} runs ended in ${RUNS_TIMEOUT_MS} ms`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const failed = rows.filter((r) => r.status !== "succeeded").length
    const toStart = rows.map((r) => r.started_at.getTime() - answered.get(r.node_id)!).sort((a, b) => a - b)
    const toEnd = rows.map((r) => r.ended_at!.getTime() - answered.get(r.node_id)!).sort((a, b) => a - b)
    const lastStart = Math.max(...rows.map((r) => r.started_at.getTime()))
    const runsPerSecond = Math.round((rows.length / (lastStart - firstSent)) * 1000)
    const creates = Math.round((CREATES / (lastAnswer - firstSent)) * 1000)

    console.log(`# Automations: runs following node creates\n\n${machine(brokers.length > 0 ? "Kafka" : "embedded")}; ${CREATES} creates, ${CONCURRENCY} in flight\n`)
    console.log(row(["log", "creates/s unwatched", "creates/s watched", "runs", "failed", "runs started/s", "p50 to start (ms)", "p99 to start (ms)", "p50 to end (ms)", "p99 to end (ms)"]))
    console.log(row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]))
    console.log(
      row([brokers.length > 0 ? "Kafka" : "embedded", unwatchedCreates, creates, rows.length, failed, runsPerSecond, percentile(toStart, 50), percentile(toStart, 99), percentile(toEnd, 50), percentile(toEnd, 99)])
    )
    console.log(`\nTarget: ≥ 200 runs started/s, p99 to start ≤ 250 ms. Times from a create's answer (negative: the run started before the answer reached the client).`)
  }
})
