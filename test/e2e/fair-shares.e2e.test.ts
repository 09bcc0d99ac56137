/**
 * Fair shares on a real node (docs/decisions.md, "Fair shares"): a key following as many streams as
 * its share allows is refused the next with 429 `rate_limited` and `Retry-After`, until one of its
 * streams ends (the same for an A2A follower); a workspace at its bound of enabled schedules is
 * refused one more with 409 `schedule_limit_reached`, whichever way it would go live.
 *
 * Turns are held open with the offline model's `/ask`: the turn waits for its person's answer,
 * its stream open, until it is cancelled.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadConfig } from "../../src/platform/Config.ts"
import { postJson, streamChat, type StreamedTurn, waitForEvent } from "../support/chat.ts"
import { addPerson, callWithCookie, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { expectError } from "./client.ts"

const STREAMS_PER_KEY = 3
const TURNS_PER_KEY = 5
const SCHEDULES = 3

let node: TestNode
let cookie: string

beforeAll(async () => {
  const base = loadConfig({})
  node = await startTestNode({
    assistant: { ...base.assistant, chatRateLimitPerMinute: 100_000 },
    fairShares: { ...base.fairShares, streamsPerKey: STREAMS_PER_KEY, turnsPerKey: TURNS_PER_KEY, enabledSchedulesPerWorkspace: SCHEDULES }
  })
  cookie = (await signIn(node.baseUrl, await addPerson(node, "owner", { org: "owner" }))).cookie
})

afterAll(async () => {
  await node?.stop()
})

/** A turn of the workspace key held open on a question; resolves once its question is out. */
const heldTurn = async () => {
  const turnId = randomUUID()
  const events: Array<any> = []
  const streamed = streamChat(node, { content: "/ask Which one? | a | b", turnId }, { onEvent: (event) => events.push(event) })
  await waitForEvent(events, (event) => event.type === "question")
  return { turnId, streamed }
}

const cancel = (turnId: string) => postJson(node, "assistant/turn/cancel", { turnId })

describe("streams: a key's share", () => {
  it("the stream past the key's share is 429 with Retry-After; once one of its streams ends, the next opens", async () => {
    const held = await Promise.all(Array.from({ length: STREAMS_PER_KEY }, heldTurn))
    const refused = await streamChat(node, { content: "one too many" })
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({ error: "rate_limited" })
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)

    // one stream ends: its share is free again
    expect((await cancel(held[0].turnId)).body).toEqual({ found: true })
    const ended: StreamedTurn = await held[0].streamed
    expect(ended.done).toMatchObject({ stopped: true })
    const next = await streamChat(node, { content: "now there is room" })
    expect(next.status).toBe(200)
    expect(next.done).toMatchObject({ reply: "You said: now there is room", stopped: false })

    for (const { turnId, streamed } of held.slice(1)) {
      await cancel(turnId)
      await streamed
    }
    // every share is back
    const again = await Promise.all(Array.from({ length: STREAMS_PER_KEY }, heldTurn))
    for (const { turnId, streamed } of again) {
      await cancel(turnId)
      await streamed
    }
  })

  it("an A2A message/stream past the key's share is refused with the same 429 (JSON-RPC data)", async () => {
    const held = await Promise.all(Array.from({ length: STREAMS_PER_KEY }, heldTurn))
    const response = await fetch(`${node.baseUrl}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${node.bootstrap.workspaceKey}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "message/stream", params: { message: { role: "user", messageId: "m1", parts: [{ kind: "text", text: "hello" }] } } })
    })
    const text = await response.text()
    const [answer] = text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)))
    expect(answer.error.data).toMatchObject({ status: 429, code: "rate_limited", reason: "streams_per_key", retryAfterSeconds: expect.any(Number) })
    for (const { turnId, streamed } of held) {
      await cancel(turnId)
      await streamed
    }
  })
})

describe("turns: a key's share", () => {
  const a2a = async (method: string, params: unknown) => {
    const response = await fetch(`${node.baseUrl}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${node.bootstrap.workspaceKey}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: randomUUID(), method, params })
    })
    return (await response.json()) as any
  }
  const send = (text: string) =>
    a2a("message/send", { message: { role: "user", messageId: randomUUID(), parts: [{ kind: "text", text }] }, configuration: { blocking: false } })

  it("turns that hold no stream (A2A message/send, not blocking) count too: the one past the share is refused, and a cancelled one frees its place", async () => {
    const tasks: Array<string> = []
    for (let i = 0; i < TURNS_PER_KEY; i++) {
      const sent = await send("/ask Which one? | a | b")
      expect(sent.result, JSON.stringify(sent)).toBeDefined()
      tasks.push(sent.result.id)
    }
    const refused = await send("one too many")
    expect(refused.error.data).toMatchObject({ status: 429, code: "rate_limited", reason: "turns_per_key", retryAfterSeconds: expect.any(Number) })

    const awaitState = async (taskId: string, done: (state: string) => boolean) => {
      for (let tries = 0; ; tries++) {
        const got = await a2a("tasks/get", { id: taskId })
        if (done(got.result.status.state)) return
        if (tries > 100) throw new Error(`task ${taskId} is still ${got.result.status.state}`)
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    // the turns wait on their question; a cancelled one ends, and its place is free
    await awaitState(tasks[0], (state) => state === "input-required")
    expect((await a2a("tasks/cancel", { id: tasks[0] })).result.status.state).toBe("canceled")
    let next: any
    for (let tries = 0; tries < 50; tries++) {
      next = await send("now there is room")
      if (next.result !== undefined) break
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(next.result, JSON.stringify(next)).toBeDefined()
    for (const taskId of tasks.slice(1)) {
      await awaitState(taskId, (state) => state === "input-required")
      await a2a("tasks/cancel", { id: taskId })
    }
  })
})

describe("schedules: a workspace's share of enabled ones", () => {
  const place = () => `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
  const asOwner = (capability: string, input: unknown) => callWithCookie(node.baseUrl, cookie, `${place()}/${capability.replaceAll(".", "/")}`, input)
  const everyMinute = { type: "schedule", cronExpression: "* * * * *" }
  const created = async (input: object) => {
    const reply = await asOwner("automation.create", { steps: [], ...input })
    expect(reply.status, JSON.stringify(reply.body)).toBe(200)
    return reply.body.automationId as string
  }

  it("one more enabled schedule is 409 schedule_limit_reached: created enabled, enabled, or given a schedule while enabled; a disabled one frees a place", async () => {
    const live = []
    for (let i = 0; i < SCHEDULES; i++) live.push(await created({ name: `every minute ${i}`, trigger: everyMinute, enabled: true }))
    expectError(await asOwner("automation.create", { name: "one too many", trigger: everyMinute, steps: [], enabled: true }), 409, "conflict", "schedule_limit_reached")

    // disabled, it is no share of the bound; enabling it is
    const waiting = await created({ name: "waiting", trigger: everyMinute })
    expectError(await asOwner("automation.enable", { automationId: waiting }), 409, "conflict", "schedule_limit_reached")
    // an enabled automation of another trigger may not become a schedule either
    const api = await created({ name: "api", trigger: { type: "api" }, enabled: true })
    expectError(await asOwner("automation.update", { automationId: api, trigger: everyMinute }), 409, "conflict", "schedule_limit_reached")
    // a schedule changing its cron takes no new place
    expect((await asOwner("automation.update", { automationId: live[0], trigger: { ...everyMinute, cronExpression: "*/5 * * * *" } })).status).toBe(200)

    expect((await asOwner("automation.disable", { automationId: live[0] })).status).toBe(200)
    const enabled = await asOwner("automation.enable", { automationId: waiting })
    expect(enabled.status).toBe(200)
    expect(enabled.body.enabled).toBe(true)
  })
})
