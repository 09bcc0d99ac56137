/**
 * Automations on two real processes (`bin/main.ts`) on one Kafka cluster and one Postgres (issue
 * 12): a per-minute schedule fires once per minute for three minutes, none twice and none lost
 * when the process owning the automation's partition is killed with `kill -9` just before a tick
 * (the survivor takes the partition over and fires that tick as its catch-up); and a run killed
 * mid-step (a webhook its receiver holds) resumes on the other process, which sends the same
 * delivery again (same `webhook-id`) as the step's second attempt, and finishes, every step
 * succeeding once. The log says so too: each tick admitted once, each step started and succeeded
 * as the timeline shows.
 */
import { Chunk, Effect, Stream } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { connect, type DbService, service } from "../../streams/Db.ts"
import { allPartitions, type LoggedEvent, readUpTo } from "../../streams/EventLog.ts"
import * as KafkaLog from "../../streams/KafkaLog.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { fireOffsetMs } from "../../src/automations/Schedule.ts"
import { verifyWebhook } from "../../src/automations/Webhooks.ts"
import { type ClusterProcess as Proc, health, startTwoProcessCluster, type TwoProcessCluster, until, untilSplit } from "../support/cluster.ts"
import { databaseUrl, kafkaBrokers } from "../support/env.ts"
import { call } from "../support/http.ts"
import { callWithCookie, signIn } from "../support/people.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhookReceiver.ts"

const PARTITIONS = 6
const MINUTE = 60_000
/** How long before a tick the owner of the automation's partition is killed: less than the session timeout, so the tick finds it dead and no one else yet. */
const KILL_BEFORE_TICK_MS = 2_000

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const nextMinute = (ms: number) => Math.floor(ms / MINUTE) * MINUTE + MINUTE
const isoOf = (ms: number) => new Date(ms).toISOString()

/** Every event in the cluster's log that its readers apply (per key, seq = last seq + 1; a stale owner's duplicate is not). */
const appliedEvents = async (prefix: string): Promise<ReadonlyArray<LoggedEvent>> => {
  const log = await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const kafka = yield* KafkaLog.make({ brokers: kafkaBrokers, prefix, partitions: PARTITIONS, clientId: "verify-automations" })
        const ends = yield* kafka.endOffsets(allPartitions(PARTITIONS))
        return yield* readUpTo(kafka, new Map(allPartitions(PARTITIONS).map((p) => [p, 0])), ends).pipe(
          Stream.mapConcat((chunk) => chunk.events),
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray)
        )
      })
    )
  )
  const seqs = new Map<string, number>()
  return log.filter((e) => {
    if (e.seq !== (seqs.get(e.key) ?? 0) + 1) return false
    seqs.set(e.key, e.seq)
    return true
  })
}

describe.skipIf(kafkaBrokers.length === 0)("automations on two processes on one Kafka cluster", () => {
  let cluster: TwoProcessCluster | undefined
  let db: DbService | undefined
  let receiver: WebhookReceiver | undefined
  afterAll(async () => {
    cluster?.stop()
    await db?.sql.end()
    await receiver?.close()
  })

  /** The processes alive, by name (a killed one is replaced by its restart). */
  const procs = new Map<string, Proc>()
  let cookie = ""
  const asOwner = async (through: Proc, capability: string, input: unknown) => {
    const { orgSlug, workspaceSlug } = cluster!.bootstrap
    const reply = await callWithCookie(through.baseUrl, cookie, `/v1/${orgSlug}/${workspaceSlug}/${capability.replaceAll(".", "/")}`, input)
    expect(reply.status, JSON.stringify(reply.body)).toBe(200)
    return reply.body
  }
  /** The process whose partitions hold `key` now. */
  const ownerOf = async (key: string) => {
    const partition = partitionFor(key, PARTITIONS)
    return until(`the owner of ${key}`, async () => {
      for (const p of procs.values()) if ((await health(p)).partitions.ready.includes(partition)) return p
      return undefined
    })
  }
  const runRows = async (automationId: string) =>
    db!.sql`select run_id, status, trigger, steps, started_at from ${db!.table("automation_runs")} where automation_id = ${automationId} order by created_at`
  const killProcess = (p: Proc) => {
    p.child.kill("SIGKILL")
    procs.delete(p.name)
  }

  it("a per-minute schedule fires once per minute for three minutes, the tick after a kill -9 of its owner fired once by the survivor", { timeout: 240_000 }, async () => {
    cluster = await startTwoProcessCluster({ partitions: PARTITIONS, dirPrefix: "svc-automations-cluster-", env: { OUTBOUND_ALLOW: "127.0.0.1" } })
    for (const p of [cluster.a, cluster.b]) procs.set(p.name, p)
    db = service(connect({ url: databaseUrl, schema: cluster.schema, max: 2 }), cluster.schema)
    const { ownerEmail, ownerPassword } = cluster.bootstrap
    cookie = (await signIn(cluster.a.baseUrl, { email: ownerEmail, password: ownerPassword })).cookie

    const created = await asOwner(cluster.a, "automation.create", { name: "every minute", trigger: { type: "schedule", cronExpression: "* * * * *" }, steps: [], enabled: true })
    expect(created.enabled).toBe(true)
    const automationId: string = created.automationId
    const ticks = [0, 1, 2].map((i) => nextMinute(Date.parse(created.createdAt)) + i * MINUTE)
    const untilRuns = (count: number) =>
      until(`${count} runs`, async () => {
        const rows = await runRows(automationId)
        return rows.length >= count && rows.every((r) => r.status === "succeeded") ? rows : undefined
      }, 2 * MINUTE)

    await untilRuns(1)
    // just before the second tick fires (its stable offset into the minute): the owner dies, its partitions wait out the session timeout
    await sleep(ticks[1] + fireOffsetMs(automationId) - KILL_BEFORE_TICK_MS - Date.now())
    const owner = await ownerOf(`automation:${automationId}`)
    killProcess(owner)
    const caughtUp = (await untilRuns(2))[1]
    // the survivor fired it once the partition was its own: after the tick, as its catch-up
    expect(caughtUp.trigger.tick).toBe(isoOf(ticks[1]))
    expect(caughtUp.started_at.getTime()).toBeGreaterThan(ticks[1])
    console.log(`the tick ${isoOf(ticks[1])} fired ${caughtUp.started_at.getTime() - ticks[1]} ms late, after ${owner.name} was killed ${KILL_BEFORE_TICK_MS} ms before it`)

    // the killed process comes back and takes partitions again, before the third tick
    const restarted = await cluster.restart(owner.name)
    procs.set(restarted.name, restarted)
    const [x, y] = [...procs.values()]
    await untilSplit(x, y, PARTITIONS)

    await untilRuns(3)
    // a moment for a second fire of any tick to show
    await sleep(3_000)
    const rows = await runRows(automationId)
    expect(rows.map((r) => [r.trigger.tick, r.status])).toEqual(ticks.map((t) => [isoOf(t), "succeeded"]))
    await asOwner(procs.values().next().value!, "automation.disable", { automationId })

    // the log: each tick admitted once by the automation, each run started once, no tick skipped
    const events = await appliedEvents(cluster.prefix)
    const ofAutomation = events.filter((e) => e.key === `automation:${automationId}`)
    expect(ofAutomation.filter((e) => e.type === "automation.run_admitted").map((e) => (e.payload as { tick: string }).tick)).toEqual(ticks.map(isoOf))
    expect(ofAutomation.filter((e) => e.type === "automation.tick_skipped")).toEqual([])
    const runIds = rows.map((r) => r.run_id as string)
    for (const runId of runIds) {
      expect(events.filter((e) => e.key === `automation_run:${runId}` && e.type === "automation_run.started")).toHaveLength(1)
    }
  })

  it("a run whose process is killed mid-step resumes on the other, sends the same webhook again and finishes, each step succeeding once", { timeout: 120_000 }, async () => {
    const [x, y] = [...procs.values()]
    await untilSplit(x, y, PARTITIONS)
    const { orgSlug, workspaceSlug, workspaceKey } = cluster!.bootstrap
    const withKey = (p: Proc, name: string, input: unknown) => call(p.baseUrl, workspaceKey, `/v1/${orgSlug}/${workspaceSlug}/${name.replaceAll(".", "/")}`, input)
    expect((await withKey(x, "schema.define_label", { label: "Mark", properties: { n: { type: "number" } } })).status).toBe(200)

    // the receiver holds the first delivery to /hold unanswered; it answers every later one
    let held: () => void = () => {}
    const firstHeld = new Promise<void>((resolve) => (held = resolve))
    receiver = await startWebhookReceiver({
      "/hold": (_, response) => {
        if (receiver!.deliveries.filter((d) => d.path === "/hold").length === 1) return held()
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ received: true }))
      }
    })
    const created = await asOwner(x, "automation.create", {
      name: "durable",
      trigger: { type: "api" },
      steps: [
        { name: "before", stepType: "tool", config: { capability: "node.create", input: { label: "Mark", properties: { n: 1 } } } },
        { name: "hold", stepType: "webhook", config: { url: `${receiver!.url}/hold` } },
        { name: "after", stepType: "webhook", config: { url: `${receiver!.url}/after` } }
      ],
      enabled: true
    })
    const automationId: string = created.automationId
    const triggered = await withKey(y, "automation.trigger", { automationId })
    expect(triggered.status, JSON.stringify(triggered.body)).toBe(200)
    const runId: string = triggered.body.runId

    await firstHeld
    const driver = await ownerOf(`automation_run:${runId}`)
    killProcess(driver)
    const survivor = [...procs.values()][0]

    const run = await until("the run to end", async () => {
      const [row] = await db!.sql`select status, steps from ${db!.table("automation_runs")} where run_id = ${runId}`
      return row !== undefined && row.status !== "running" ? row : undefined
    }, 60_000)
    expect(run.status, JSON.stringify(run.steps)).toBe("succeeded")
    expect(run.steps.map((r: { name: string; attempt: number; status: string; error: { code: string } | null }) => [r.name, r.attempt, r.status, r.error?.code ?? null])).toEqual([
      ["before", 1, "succeeded", null],
      ["hold", 1, "failed", "attempt_interrupted"],
      ["hold", 2, "succeeded", null],
      ["after", 1, "succeeded", null]
    ])

    // the same delivery twice (the receiver may drop the second by its id), both signed; the killed sender hung up on the first
    const holds = receiver!.deliveries.filter((d) => d.path === "/hold")
    expect(holds.map((d) => d.headers["webhook-id"])).toEqual([`${runId}.1`, `${runId}.1`])
    for (const d of holds) {
      expect(verifyWebhook({ headers: d.headers, body: d.body, secret: created.webhookSecret, nowSeconds: Math.floor(Date.now() / 1000) })).toMatchObject({ valid: true })
    }
    expect(receiver!.abandoned.map((d) => d.path)).toEqual(["/hold"])
    expect(receiver!.deliveries.filter((d) => d.path === "/after")).toHaveLength(1)
    // the tool step before the kill acted once
    const marks = await withKey(survivor, "node.list", { label: "Mark" })
    expect(marks.body.nodes).toHaveLength(1)

    // the log: the interrupted step started twice, every step succeeded once
    const ofRun = (await appliedEvents(cluster!.prefix)).filter((e) => e.key === `automation_run:${runId}`)
    const steps = (type: string) => ofRun.filter((e) => e.type === type).map((e) => [(e.payload as { index: number }).index, (e.payload as { attempt: number }).attempt])
    expect(steps("automation_run.step_started")).toEqual([[0, 1], [1, 1], [1, 2], [2, 1]])
    expect(steps("automation_run.step_succeeded")).toEqual([[0, 1], [1, 2], [2, 1]])
    expect(ofRun.filter((e) => e.type === "automation_run.succeeded")).toHaveLength(1)
  })
})
