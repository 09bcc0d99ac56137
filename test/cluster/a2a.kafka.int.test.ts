/**
 * A2A across a two-process Kafka cluster (spec 3.1, 4.3): two real processes (`bin/main.ts`) on one
 * Kafka cluster and one Postgres. A task whose turn runs on one process is read and cancelled
 * through the other: the cancel reaches the turn through the conversation actor and the run rows,
 * the turn stops, its run ends `stopped`, and the stream on the first process ends with the final
 * `canceled` status-update.
 */
import { createParser } from "eventsource-parser"
import { randomUUID } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import { connect, service } from "../../streams/Db.ts"
import { type ClusterProcess as Proc, startTwoProcessCluster, type TwoProcessCluster, until } from "../support/cluster.ts"
import { databaseUrl, kafkaBrokers } from "../support/env.ts"
import { call } from "../support/http.ts"

const PARTITIONS = 6

describe.skipIf(kafkaBrokers.length === 0)("A2A on a two-process Kafka cluster", () => {
  let cluster: TwoProcessCluster | undefined
  afterAll(() => cluster?.stop())

  it("a task running on one process is read and cancelled through the other, and its turn stops", { timeout: 180_000 }, async () => {
    cluster = await startTwoProcessCluster({ partitions: PARTITIONS, dirPrefix: "svc-a2a-cluster-" })
    const { a, b, schema, bootstrap: { workspaceKey } } = cluster

    const rpc = async (p: Proc, method: string, params: unknown, headers?: Record<string, string>) => {
      const reply = await call(p.baseUrl, workspaceKey, "/a2a", { jsonrpc: "2.0", id: randomUUID(), method, params }, headers)
      expect(reply.status, JSON.stringify(reply.body)).toBe(200)
      return { ...(reply.body as { result?: any; error?: { code: number; message: string } }), position: reply.position }
    }

    // each process answers for the cluster: a card naming itself, and a task of the other process
    const cardOfB = (await (await fetch(`${b.baseUrl}/.well-known/agent-card.json`)).json()) as { url: string }
    expect(cardOfB.url).toBe(`${b.baseUrl}/a2a`)
    const quick = await rpc(a, "message/send", { message: { role: "user", messageId: randomUUID(), parts: [{ kind: "text", text: "hello cluster" }] } })
    expect(quick.result).toMatchObject({ kind: "task", status: { state: "completed" } })
    // b's read models follow the log: the task shows there completed once they hold its end
    const onB = await until("the task to be readable on b", async () => {
      const task = (await rpc(b, "tasks/get", { id: quick.result.id })).result
      return task?.status.state === "completed" ? task : undefined
    }, 10_000)
    expect(onB.status.state).toBe("completed")
    // read-your-writes by position: a send's answer names where its task ended in the log, and a
    // read through the other process sent with it sees that end at once
    expect(quick.position).toMatch(/^\d+:\d+(,\d+:\d+)*$/)
    for (let i = 0; i < 3; i++) {
      const sent = await rpc(a, "message/send", { message: { role: "user", messageId: randomUUID(), parts: [{ kind: "text", text: `read me ${i}` }] } })
      const read = await rpc(b, "tasks/get", { id: sent.result.id }, { "svc-position": sent.position! })
      expect(read.result).toMatchObject({ id: sent.result.id, status: { state: "completed" } })
    }
    const malformed = await rpc(b, "tasks/get", { id: quick.result.id }, { "svc-position": "nonsense" })
    expect(malformed.error).toMatchObject({ code: -32602, data: { reason: "invalid_position" } })

    // a long turn on a, followed on its stream: 300 words, 3 a chunk, 300 ms apart, take 30 s
    const envelopes: Array<any> = []
    const response = await fetch(`${a.baseUrl}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", authorization: `Bearer ${workspaceKey}` },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "long",
        method: "message/stream",
        params: { message: { role: "user", messageId: randomUUID(), parts: [{ kind: "text", text: "/slow 300\n/long 300" }] } }
      })
    })
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    const parser = createParser({ onEvent: (event) => void envelopes.push(JSON.parse(event.data)) })
    const decoder = new TextDecoder()
    const streamEnded = (async () => {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }))
      return Date.now()
    })()

    await until("the first chunk of the reply", async () => (envelopes.some((e) => e.result?.kind === "artifact-update") ? true : undefined), 30_000)
    const taskId: string = envelopes[0].result.id
    expect(envelopes[0].result.status.state).toBe("submitted")

    // b reads it: working
    const seen = await until("b to read the task as working", async () => {
      const task = (await rpc(b, "tasks/get", { id: taskId })).result
      return task?.status.state === "working" ? task : undefined
    }, 10_000)
    expect(seen).toMatchObject({ kind: "task", id: taskId, status: { state: "working" }, artifacts: [] })

    // b follows it too, until it ends
    const followed: Array<any> = []
    const following = fetch(`${b.baseUrl}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", authorization: `Bearer ${workspaceKey}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: "follow", method: "tasks/resubscribe", params: { id: taskId } })
    }).then(async (reply) => {
      const followParser = createParser({ onEvent: (event) => void followed.push(JSON.parse(event.data)) })
      const followDecoder = new TextDecoder()
      for await (const chunk of reply.body as unknown as AsyncIterable<Uint8Array>) followParser.feed(followDecoder.decode(chunk, { stream: true }))
    })
    await until("b's resubscription to see working", async () => (followed.length > 0 ? true : undefined), 10_000)

    // b cancels it
    const canceledAt = Date.now()
    const canceled = await rpc(b, "tasks/cancel", { id: taskId })
    expect(canceled.error).toBeUndefined()
    expect(canceled.result).toMatchObject({ kind: "task", id: taskId, status: { state: "canceled" } })

    // the turn on a stops: its stream ends with the final canceled status-update, long before the reply would have
    const endedAt = await Promise.race([streamEnded, new Promise<number>((_, reject) => setTimeout(() => reject(new Error("a's stream did not end")), 15_000))])
    expect(endedAt - canceledAt).toBeLessThan(10_000)
    expect(envelopes.at(-1)).toMatchObject({ jsonrpc: "2.0", id: "long", result: { kind: "status-update", taskId, status: { state: "canceled" }, final: true } })
    expect(envelopes.filter((e) => e.result?.final === true)).toHaveLength(1)
    const chunks = envelopes.filter((e) => e.result?.kind === "artifact-update")
    expect(chunks.length).toBeLessThan(100)

    await following
    expect(followed[0].result).toMatchObject({ kind: "status-update", taskId, status: { state: "working" }, final: false })
    expect(followed.at(-1).result).toMatchObject({ kind: "status-update", taskId, status: { state: "canceled" }, final: true })

    // both processes read it canceled; a second cancel through a is -32002
    expect((await rpc(a, "tasks/get", { id: taskId })).result.status.state).toBe("canceled")
    expect((await rpc(b, "tasks/get", { id: taskId })).result.status.state).toBe("canceled")
    expect((await rpc(a, "tasks/cancel", { id: taskId })).error?.code).toBe(-32002)

    // its run ended stopped
    const db = service(connect({ url: databaseUrl, schema, max: 2 }), schema)
    try {
      const run = await until("the run to end", async () => {
        const [row] = await db.sql`
          select r.status, r.stop_requested from ${db.table("runs")} r
          join ${db.table("a2a_tasks")} t on t.turn_id = r.turn_id
          where t.task_id = ${taskId}`
        return row !== undefined && row.status !== "running" ? row : undefined
      }, 15_000)
      expect(run.status).toBe("stopped")
      const [task] = await db.sql`select state, run_id from ${db.table("a2a_tasks")} where task_id = ${taskId}`
      expect(task.state).toBe("canceled")
      expect(task.run_id).not.toBeNull()

      // a task cancelled through b at once, before or just as its run starts on a: the turn stops all the same
      const submitted = await rpc(a, "message/send", {
        message: { role: "user", messageId: randomUUID(), parts: [{ kind: "text", text: "/slow 300\n/long 300" }] },
        configuration: { blocking: false }
      })
      expect(["submitted", "working"]).toContain(submitted.result.status.state)
      const early = await until("b to read the new task", async () => ((await rpc(b, "tasks/get", { id: submitted.result.id })).result ? true : undefined), 10_000)
      expect(early).toBe(true)
      expect((await rpc(b, "tasks/cancel", { id: submitted.result.id })).result.status.state).toBe("canceled")
      const earlyRun = await until("the early-cancelled run to end", async () => {
        const [row] = await db.sql`
          select r.status from ${db.table("runs")} r join ${db.table("a2a_tasks")} t on t.turn_id = r.turn_id
          where t.task_id = ${submitted.result.id}`
        return row !== undefined && row.status !== "running" ? row : undefined
      }, 15_000)
      expect(earlyRun.status).toBe("stopped")
      expect((await rpc(a, "tasks/get", { id: submitted.result.id })).result.status.state).toBe("canceled")
    } finally {
      await db.sql.end()
    }
  })
})
