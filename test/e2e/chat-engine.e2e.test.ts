/**
 * The assistant engine across process lifetimes and its own failure rows of spec 7.2: an approval
 * resolved after a restart still runs; a question's timer and a dead process's run are closed by
 * the next process; a draining process refuses turns (`engine_unavailable`); a shutdown mid-turn
 * ends it with `engine_unavailable` (the engine went down under it); a turn id still running cannot be recorded again
 * (`assistant_run_not_recorded`); the code graph tool's service missing ends the turn
 * (`codegraph_unavailable`).
 */
import { Effect, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import { AskQuestion, StartTurn } from "../../actors/conversation/protocol.ts"
import { TurnRegistry } from "../../src/assistant/TurnRegistry.ts"
import { loadConfig } from "../../src/platform/Config.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { postJson, streamChat, waitForEvent } from "../support/chat.ts"
import { steppedClock } from "../support/clock.ts"
import { bootstrapPlace } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call } from "./client.ts"

const nodes: Array<TestNode> = []
const start = async (...args: Parameters<typeof startTestNode>) => {
  const node = await startTestNode(...args)
  nodes.push(node)
  return node
}
afterAll(async () => {
  for (const node of nodes.reverse()) await node.stop().catch(() => {})
})

/** The stream failed after it opened: exactly one error event, then done with [DONE], nothing after. */
const expectStreamFailure = (turn: Awaited<ReturnType<typeof streamChat>>, code: string, reason?: string) => {
  expect(turn.status).toBe(200)
  const errors = turn.events.filter((e) => e.type === "error")
  expect(errors).toHaveLength(1)
  expect(errors[0]).toMatchObject({ code, message: expect.any(String), ...(reason === undefined ? {} : { reason }) })
  expect(turn.sequence.at(-1)).toEqual({ kind: "named", event: "done", data: "[DONE]", id: expect.stringMatching(/^\d+$/) })
  expect(turn.sequence.at(-2)).toEqual({ kind: "data", data: errors[0], id: expect.stringMatching(/^\d+$/) })
}

const rows = (node: TestNode, table: string) => node.db.sql`select * from ${node.db.sql(`${node.db.schema}.${table}`)}`

describe("across a restart", () => {
  it("an approval parked before the process stopped is resolved and runs after it restarted", async () => {
    const first = await startTestNode()
    await call(first, "schema.define_label", { label: "Memo", properties: {} })
    const created = await call(first, "node.create", { label: "Memo", properties: {} })
    const turn = await streamChat(first, { content: `/tool node__delete {"nodeId":"${created.body.nodeId}"}` })
    const card = turn.events.find((e) => e.type === "approval-required")
    expect(card).toBeDefined()
    await first.stop()

    const second = await start({ dataDir: first.config.dataDir, dbSchema: first.config.dbSchema })
    const resolved = await postJson(second, "agent/approvals/resolve", { approvalId: card.approvalId, decision: "approved" })
    expect(resolved.status).toBe(200)
    expect(resolved.body.execution.status).toBe("succeeded")
    expect((await call(second, "node.get", { nodeId: created.body.nodeId })).status).toBe(404)
  })

  it("a question whose turn's process is gone closes with timeout after five minutes, and its run is ended as abandoned", async () => {
    // a turn that recorded its run and its question, then lost its process (it crashed before ending):
    // the commands it sent are all that is left
    const clock = steppedClock()
    const node = await start({}, { clock: clock.clock })
    const { orgId, workspaceId } = await bootstrapPlace(node)
    const conversationId = randomUUID()
    const runId = `tse_${randomUUID().replaceAll("-", "")}`
    const questionId = `qst_${randomUUID().replaceAll("-", "")}`
    const at = new Date(clock.now()).toISOString()
    const meta = () => ({ commandId: randomUUID(), at, actor: "system" })
    await Runtime.runPromise(node.runtime)(
      Effect.gen(function* () {
        yield* node.host.send(ConversationActor, conversationId, new StartTurn({
          conversationId, create: true, publicId: `cnv_${randomUUID().replaceAll("-", "")}`, orgId, workspaceId, userId: "usr_gone", apiKeyId: null,
          runId, turnId: null, userMessageId: "msg_1", content: "/ask Still there?", attachments: [], model: "offline:balanced", tier: null, effort: null, carriedSummary: false
        }), meta())
        yield* node.host.send(ConversationActor, conversationId, new AskQuestion({
          runId, questionId, question: "Still there?", options: ["yes"], userId: "usr_gone", deadline: new Date(clock.now() + 5 * 60 * 1000).toISOString()
        }), meta())
      })
    )
    clock.advance(5 * 60 * 1000 + 1000)
    const closed = await waitForRow(node, "questions", (q) => q.question_id === questionId && q.status === "closed")
    expect(closed.reason).toBe("timeout")

    clock.advance(2 * 60 * 60 * 1000)
    const ended = await waitForRow(node, "runs", (r) => r.run_id === runId && r.status !== "running")
    expect(ended.status).toBe("failed")
    expect(ended.error).toMatchObject({ code: "engine_aborted" })
  }, 30_000)
})

const waitForRow = async (node: TestNode, table: string, predicate: (row: any) => boolean, timeoutMs = 15_000) => {
  const started = Date.now()
  for (;;) {
    const found = (await rows(node, table)).find(predicate)
    if (found !== undefined) return found
    if (Date.now() - started > timeoutMs) throw new Error(`no matching row in ${table}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe("engine failures after the stream opened", () => {
  it("a draining process refuses new turns with engine_unavailable", async () => {
    const node = await start()
    await Runtime.runPromise(node.runtime)(Effect.flatMap(TurnRegistry, (registry) => Effect.sync(registry.drain)) as Effect.Effect<void>)
    expectStreamFailure(await streamChat(node, { content: "hello" }), "engine_unavailable")
    expect(await rows(node, "runs")).toHaveLength(0)
  })

  it("a shutdown in the middle of a turn ends it with engine_unavailable, recorded on its run", async () => {
    const node = await startTestNode()
    const events: Array<any> = []
    const streaming = streamChat(node, { content: "/slow 200\n/long 300" }, { onEvent: (e) => events.push(e) })
    await waitForEvent(events, (e) => e.type === "text")
    const runId = events[0].runId
    const stopping = node.stop()
    const turn = await streaming
    await stopping
    expectStreamFailure(turn, "engine_unavailable")
    const restarted = await start({ dataDir: node.config.dataDir, dbSchema: node.config.dbSchema })
    const [run] = await restarted.db.sql`select status, error from ${restarted.db.sql(`${restarted.db.schema}.runs`)} where run_id = ${runId}`
    expect(run.status).toBe("failed")
    expect(run.error).toMatchObject({ code: "engine_unavailable" })
  })

  it("a turn id still running in the conversation cannot be recorded again: assistant_run_not_recorded", async () => {
    const node = await start()
    const first = await streamChat(node, { content: "start" })
    const conversationId = first.done.conversationPublicId
    const turnId = randomUUID()
    const events: Array<any> = []
    const running = streamChat(node, { content: "/slow 100\n/long 60", conversationId, turnId }, { onEvent: (e) => events.push(e) })
    await waitForEvent(events, (e) => e.type === "run")
    const clash = await streamChat(node, { content: "again", conversationId, turnId })
    expectStreamFailure(clash, "assistant_run_not_recorded", "turn_id_in_use")
    expect(clash.events.some((e) => e.type === "run")).toBe(false)
    await postJson(node, "assistant/turn/cancel", { turnId })
    expect((await running).done.stopped).toBe(true)
    // the same conversation goes on with the next message
    const next = await streamChat(node, { content: "after", conversationId, turnId })
    expect(next.done.reply).toBe("You said: after")
  })
})

describe("the code graph tool", () => {
  let codegraph: Server
  let requests: Array<any> = []
  beforeAll(async () => {
    codegraph = createServer((req, res) => {
      let body = ""
      req.on("data", (chunk) => (body += chunk))
      req.on("end", () => {
        requests.push({ url: req.url, body: JSON.parse(body) })
        res.setHeader("content-type", "application/json")
        res.end(JSON.stringify({ results: [{ path: "src/main.ts", symbol: "main", line: 12 }] }))
      })
    })
    await new Promise<void>((resolve) => codegraph.listen(0, "127.0.0.1", resolve))
  })
  afterAll(() => new Promise<void>((resolve) => codegraph.close(() => resolve())))

  it("not set up: the turn fails with codegraph_unavailable", async () => {
    const node = await start()
    const turn = await streamChat(node, { content: '/tool codegraph__search {"query":"main"}' })
    expect(turn.events.find((e) => e.type === "tool-call-end")).toMatchObject({ status: "failed", errorReason: "codegraph_unavailable" })
    expectStreamFailure(turn, "codegraph_unavailable")
  })

  it("set up: the agent searches it through the checkpoint", async () => {
    requests = []
    const url = `http://127.0.0.1:${(codegraph.address() as AddressInfo).port}`
    // the service listens on this machine
    const node = await start({ assistant: { ...loadConfig({}).assistant, codegraphUrl: url }, outboundAllow: parseOutboundAllow("127.0.0.1") })
    const turn = await streamChat(node, { content: '/tool codegraph__search {"query":"main","limit":3}' })
    expect(turn.events.find((e) => e.type === "tool-call-end")).toMatchObject({
      status: "completed",
      output: { results: [{ path: "src/main.ts", symbol: "main", line: 12 }] }
    })
    expect(requests).toEqual([{ url: "/search", body: { workspaceId: expect.any(String), query: "main", limit: 3 } }])
    expect(turn.done.stopped).toBe(false)
  })
})
