/**
 * The assistant chat over real HTTP with the built-in offline model: the stream's events in spec
 * order (4.1, 6.1), the turn result (2.3), tools through the checkpoint, approvals, questions,
 * cancel, a client that goes away, memory (2.5) and the goal (2.2).
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postJson, streamChat, waitForEvent } from "../support/chat.ts"
import { addPerson, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { steppedClock } from "../support/clock.ts"
import { call, createNote, eventsOf, eventually, sleep } from "./client.ts"

let node: TestNode
const clock = steppedClock()

beforeAll(async () => {
  node = await startTestNode({}, { clock: clock.clock })
})
afterAll(async () => {
  await node?.stop()
})

const typesOf = (events: ReadonlyArray<any>) => events.map((e) => e.type)

describe("a turn on the stream", () => {
  it("opens with the stream headers, starts with run, ends with usage and the named done event carrying the turn result", async () => {
    const turn = await streamChat(node, { content: "hello there" })
    expect(turn.status).toBe(200)
    expect(turn.headers.get("content-type")).toBe("text/event-stream")
    expect(turn.headers.get("cache-control")).toBe("no-cache")
    expect(turn.headers.get("connection")).toBe("keep-alive")
    const types = typesOf(turn.events)
    expect(types[0]).toBe("run")
    expect(types.at(-1)).toBe("usage")
    expect(types.filter((t) => t === "usage")).toHaveLength(1)
    expect(types).toEqual(expect.arrayContaining(["step-start", "reasoning-start", "reasoning-delta", "reasoning-end", "text", "step-finish"]))
    expect(types.indexOf("reasoning-start")).toBeLessThan(types.indexOf("reasoning-end"))
    expect(types.indexOf("step-start")).toBeLessThan(types.indexOf("text"))
    const last = turn.sequence.at(-1)
    expect(last).toMatchObject({ kind: "named", event: "done" })
    const result = turn.done
    const text = turn.events.filter((e) => e.type === "text").map((e) => e.text).join("")
    expect(result).toMatchObject({
      conversationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      conversationPublicId: expect.stringMatching(/^cnv_/),
      runId: turn.events[0].runId,
      reply: text,
      parkedCards: [],
      toolCalls: [],
      stopped: false
    })
    expect(text).toBe("You said: hello there")
    const usage = turn.events.at(-1).usage
    expect(usage.totalTokens).toBe(usage.promptTokens + usage.completionTokens)
    expect(usage.totalTokens).toBeGreaterThan(0)
    const reasoningEnd = turn.events.find((e) => e.type === "reasoning-end")
    expect(reasoningEnd.durationMs).toBeGreaterThanOrEqual(0)

    const reply = await postJson(node, "assistant/reply", { runId: result.runId })
    expect(reply).toMatchObject({ status: 200, body: { runStatus: "finished", reply: { text } } })
  })

  it("continues a conversation by its cnv_ id or its UUID, and the model reads the earlier messages", async () => {
    const first = await streamChat(node, { content: "remember the word teal" })
    const second = await streamChat(node, { content: "/memory", conversationId: first.done.conversationPublicId })
    expect(second.done.conversationId).toBe(first.done.conversationId)
    expect(second.done.reply).toBe("I see 2 earlier messages. Summary: none.")
    const third = await streamChat(node, { content: "/memory", conversationId: first.done.conversationId })
    expect(third.done.reply).toBe("I see 4 earlier messages. Summary: none.")
  })

  it("calls a capability as a tool through the checkpoint: tool input, call start and end, in order", async () => {
    const turn = await streamChat(node, { content: "/tool system__ping {}" })
    const types = typesOf(turn.events)
    for (const type of ["tool-input-start", "tool-input-delta", "tool-call-start", "tool-call-end"]) expect(types).toContain(type)
    expect(types.indexOf("tool-input-start")).toBeLessThan(types.indexOf("tool-call-start"))
    expect(types.indexOf("tool-call-start")).toBeLessThan(types.indexOf("tool-call-end"))
    const start = turn.events.find((e) => e.type === "tool-call-start")
    expect(start).toMatchObject({ capability: "system.ping", riskLevel: "low", inputPreview: "{}" })
    const end = turn.events.find((e) => e.type === "tool-call-end")
    expect(end).toMatchObject({ toolCallId: start.toolCallId, status: "completed", output: { pong: true } })
    expect(turn.done.toolCalls).toEqual([{ toolCallId: start.toolCallId, toolName: "system.ping", outcome: "completed", durationMs: expect.any(Number) }])
    expect(turn.done.reply).toContain('Tool system__ping returned: {"pong":true}')
    // two model calls: the one asking for the tool, the one answering after it
    expect(types.filter((t) => t === "step-start")).toHaveLength(2)
  })

  it("a failing tool call ends with status failed and its reason, and the turn goes on", async () => {
    const turn = await streamChat(node, { content: '/tool node__get {"nodeId":"nod_missing"}' })
    const end = turn.events.find((e) => e.type === "tool-call-end")
    expect(end).toMatchObject({ status: "failed", errorReason: "node_not_found" })
    // its output is the error body REST answers for the same call
    expect(end.output).toEqual((await call(node, "node.get", { nodeId: "nod_missing" })).body)
    expect(turn.done.toolCalls[0].outcome).toBe("failed")
    expect(turn.done.stopped).toBe(false)
  })

  it("a call the checkpoint refuses (403) ends denied, not failed, in the turn result and the run's transcript", async () => {
    // only a person acting directly may enable an automation: the agent is refused (spec 3.4)
    const ping = { name: "ping", stepType: "tool", config: { capability: "system.ping" } }
    const automation = await call(node, "automation.create", { name: "for a person to enable", trigger: { type: "api" }, steps: [ping] })
    expect(automation.status).toBe(200)
    const turn = await streamChat(node, { content: `/tool automation__enable {"automationId":"${automation.body.automationId}"}` })
    const end = turn.events.find((e) => e.type === "tool-call-end")
    expect(end).toMatchObject({ status: "failed", errorReason: "human_required" })
    expect(turn.done.toolCalls).toEqual([{ toolCallId: end.toolCallId, toolName: "automation.enable", outcome: "denied", durationMs: expect.any(Number) }])
    const transcript = await call(node, "run.get", { runId: turn.done.runId })
    expect(transcript.body.toolCalls).toEqual(turn.done.toolCalls)
  })
})

describe("approvals", () => {
  const parkDelete = async (nodeId: string, options: { cookie?: string } = {}) => {
    const turn = await streamChat(node, { content: `/tool node__delete {"nodeId":"${nodeId}"}` }, options)
    const card = turn.events.find((e) => e.type === "approval-required")
    return { turn, card }
  }
  const makeNode = () => createNote(node)

  it("parks a call that needs approval: it does not run, the turn goes on, and approving runs it as a new run", async () => {
    const nodeId = await makeNode()
    const { turn, card } = await parkDelete(nodeId)
    expect(card).toMatchObject({ approvalId: expect.stringMatching(/^apr_/), capability: "node.delete", riskLevel: "medium" })
    expect(Date.parse(card.expiresAt)).toBeGreaterThan(Date.now())
    expect(typesOf(turn.events)).not.toContain("tool-call-start")
    expect(turn.done.parkedCards).toEqual([{ approvalId: card.approvalId, capability: "node.delete", expiresAt: card.expiresAt }])
    expect(turn.done.toolCalls).toEqual([expect.objectContaining({ toolName: "node.delete", outcome: "parked", approvalId: card.approvalId })])
    expect((await call(node, "node.get", { nodeId })).status).toBe(200)

    const resolved = await postJson(node, "agent/approvals/resolve", { approvalId: card.approvalId, decision: "approved" })
    expect(resolved.status).toBe(200)
    expect(resolved.body.execution).toEqual({ status: "succeeded", runId: expect.stringMatching(/^tse_/) })
    expect((await call(node, "node.get", { nodeId })).status).toBe(404)
    const run = await postJson(node, "assistant/reply", { runId: resolved.body.execution.runId })
    expect(run.body.runStatus).toBe("finished")

    const again = await postJson(node, "agent/approvals/resolve", { approvalId: card.approvalId, decision: "approved" })
    expect(again.status).toBe(409)
    expect(again.body.error).toMatchObject({ code: "conflict", reason: "approval_expired" })
  })

  it("a denied approval runs nothing; someone else's approval and an expired one are 409 approval_expired", async () => {
    const nodeId = await makeNode()
    const { turn, card } = await parkDelete(nodeId)
    const mallory = await addPerson(node, "mallory", { org: "member", workspace: "admin" })
    const { cookie } = await signIn(node.baseUrl, mallory)
    const foreign = await postJson(node, "agent/approvals/resolve", { approvalId: card.approvalId, decision: "approved" }, { cookie })
    expect(foreign.status).toBe(409)
    expect(foreign.body.error.reason).toBe("approval_expired")
    const denied = await postJson(node, "agent/approvals/resolve", { approvalId: card.approvalId, decision: "denied", note: "keep it" })
    expect(denied.body).toEqual({ execution: { status: "denied" }, receipt: expect.objectContaining({ approvalId: card.approvalId, decision: "denied" }) })
    expect((await call(node, "node.get", { nodeId })).status).toBe(200)
    // the parked call ends `denied` in the turn's recorded result: the thread and the run's transcript
    const thread = await call(node, "conversation.get", { conversationId: turn.done.conversationPublicId })
    expect(thread.body.runs[0].toolCalls).toEqual([expect.objectContaining({ toolName: "node.delete", outcome: "denied", approvalId: card.approvalId })])
    const transcript = await call(node, "run.get", { runId: turn.done.runId })
    expect(transcript.body.toolCalls).toEqual(thread.body.runs[0].toolCalls)

    const later = await parkDelete(nodeId)
    clock.advance(25 * 60 * 60 * 1000)
    const expired = await postJson(node, "agent/approvals/resolve", { approvalId: later.card.approvalId, decision: "approved" })
    expect(expired.status).toBe(409)
    expect(expired.body.error.reason).toBe("approval_expired")
    expect((await call(node, "node.get", { nodeId })).status).toBe(200)
  })
})

describe("questions", () => {
  it("the agent asks, the person answers, question-end says answered and the turn continues with the answer", async () => {
    const events: Array<any> = []
    const streaming = streamChat(node, { content: "/ask Which colour? | red | blue" }, { onEvent: (e) => events.push(e) })
    const question = await waitForEvent(events, (e) => e.type === "question")
    expect(question).toMatchObject({ id: expect.stringMatching(/^qst_/), question: "Which colour?", options: ["red", "blue"] })
    const tooLong = await postJson(node, "assistant/question/answer", { questionId: question.id, answer: "x".repeat(4001) })
    expect(tooLong.status).toBe(400)
    const answered = await postJson(node, "assistant/question/answer", { questionId: question.id, answer: "blue" })
    expect(answered.body).toEqual({ found: true })
    const turn = await streaming
    expect(turn.events.find((e) => e.type === "question-end")).toEqual({ type: "question-end", id: question.id, status: "answered" })
    expect(turn.done.reply).toContain('Tool ask_user returned: {"answer":"blue"}')
    const twice = await postJson(node, "assistant/question/answer", { questionId: question.id, answer: "red" })
    expect(twice.body).toEqual({ found: false })
  })

  it("five minutes without an answer close the question with reason timeout; the agent states its assumption", async () => {
    const events: Array<any> = []
    const streaming = streamChat(node, { content: "/ask Ship it today? | yes | no" }, { onEvent: (e) => events.push(e) })
    const question = await waitForEvent(events, (e) => e.type === "question")
    clock.advance(5 * 60 * 1000 + 1000)
    const turn = await streaming
    expect(turn.events.find((e) => e.type === "question-end")).toEqual({ type: "question-end", id: question.id, status: "closed", reason: "timeout" })
    expect(turn.done.reply).toContain("No answer came, so I assume yes.")
  })

  it("only the asking person may answer", async () => {
    const events: Array<any> = []
    const streaming = streamChat(node, { content: "/ask Proceed? | yes" }, { onEvent: (e) => events.push(e) })
    const question = await waitForEvent(events, (e) => e.type === "question")
    const eve = await addPerson(node, "eve", { org: "member", workspace: "member" })
    const { cookie } = await signIn(node.baseUrl, eve)
    expect((await postJson(node, "assistant/question/answer", { questionId: question.id, answer: "yes" }, { cookie })).body).toEqual({ found: false })
    await postJson(node, "assistant/question/answer", { questionId: question.id, answer: "yes" })
    await streaming
  })
})

describe("cancel and disconnect", () => {
  it("cancel mid-stream returns stopped true with the partial reply and closes open questions with ended", async () => {
    const turnId = randomUUID()
    const events: Array<any> = []
    const streaming = streamChat(node, { content: "/slow 100\n/long 200", turnId }, { onEvent: (e) => events.push(e) })
    await waitForEvent(events, (e) => e.type === "text")
    const cancelled = await postJson(node, "assistant/turn/cancel", { turnId })
    expect(cancelled.body).toEqual({ found: true })
    const turn = await streaming
    expect(turn.done.stopped).toBe(true)
    const text = turn.events.filter((e) => e.type === "text").map((e) => e.text).join("")
    expect(turn.done.reply).toBe(text)
    expect(text.split(" ").length).toBeLessThan(200)
    expect(typesOf(turn.events).at(-1)).toBe("usage")
    const reply = await postJson(node, "assistant/reply", { runId: turn.done.runId })
    expect(reply.body).toEqual({ runStatus: "stopped", reply: { text } })
    expect((await postJson(node, "assistant/turn/cancel", { turnId })).body).toEqual({ found: false })

    const askId = randomUUID()
    const asking: Array<any> = []
    const waiting = streamChat(node, { content: "/ask Wait for me? | yes", turnId: askId }, { onEvent: (e) => asking.push(e) })
    const question = await waitForEvent(asking, (e) => e.type === "question")
    await postJson(node, "assistant/turn/cancel", { turnId: askId })
    const stopped = await waiting
    expect(stopped.done.stopped).toBe(true)
    expect(stopped.events.find((e) => e.type === "question-end")).toEqual({ type: "question-end", id: question.id, status: "closed", reason: "ended" })
    // the question's call was cut off by the stop: it ends `cancelled`, in the result and the thread
    expect(stopped.done.toolCalls).toEqual([{ toolCallId: expect.any(String), toolName: "ask_user", outcome: "cancelled", durationMs: expect.any(Number) }])
    const thread = await call(node, "conversation.get", { conversationId: stopped.done.conversationPublicId })
    expect(thread.body.runs[0].toolCalls).toEqual(stopped.done.toolCalls)
  })

  it("a client that goes away does not stop the turn: the reply route finds the finished reply", async () => {
    const abort = new AbortController()
    const events: Array<any> = []
    const streaming = streamChat(node, { content: "/slow 30\n/long 40" }, { signal: abort.signal, onEvent: (e) => events.push(e) })
    const run = await waitForEvent(events, (e) => e.type === "run")
    abort.abort()
    await streaming
    const reply = await eventually(
      () => postJson(node, "assistant/reply", { runId: run.runId }),
      (r) => r.body.runStatus !== "running"
    )
    expect(reply.body.runStatus).toBe("finished")
    expect(reply.body.reply.text.split(" ")).toHaveLength(40)
  })

  it("the reply route answers only the asking person: a colleague's run is 404 run_not_found, as run.get answers", async () => {
    const turn = await streamChat(node, { content: "a private thought" })
    expect((await postJson(node, "assistant/reply", { runId: turn.done.runId })).body.reply.text).toBe("You said: a private thought")
    const colleague = await addPerson(node, "colleague", { org: "member", workspace: "member" })
    const { cookie } = await signIn(node.baseUrl, colleague)
    for (const route of ["assistant/reply", "run/get"]) {
      const refused = await postJson(node, route, { runId: turn.done.runId }, { cookie })
      expect({ status: refused.status, error: refused.body.error }).toEqual({
        status: 404,
        error: { code: "not_found", reason: "run_not_found", message: `no run ${turn.done.runId} of yours in this workspace` }
      })
    }
  })
})

describe("the ask route", () => {
  it("answers the turn result as one JSON object and refuses the model override fields", async () => {
    const asked = await postJson(node, "assistant/ask", { content: "plain question" })
    expect(asked.status).toBe(200)
    expect(asked.body).toMatchObject({ reply: "You said: plain question", stopped: false, runId: expect.stringMatching(/^tse_/) })
    for (const field of ["tier", "model", "effort"]) {
      const refused = await postJson(node, "assistant/ask", { content: "x", [field]: field === "effort" ? "low" : "fast" })
      expect(refused.status).toBe(400)
      expect(refused.body.error).toMatchObject({ code: "bad_request", reason: "model_override_not_allowed" })
    }
  })
})

describe("retries", () => {
  it("the same Idempotency-Key names the same conversation and records the run once", async () => {
    const idempotencyKey = randomUUID()
    const ask = () =>
      fetch(`${node.baseUrl}/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/assistant/ask`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${node.bootstrap.workspaceKey}`, "idempotency-key": idempotencyKey },
        body: JSON.stringify({ content: "once" })
      }).then((r) => r.json() as Promise<any>)
    const first = await ask()
    const again = await ask()
    expect(again.conversationId).toBe(first.conversationId)
    expect(again.runId).toBe(first.runId)
    const runs = await node.db.sql`select count(*)::int as n from ${node.db.sql(node.db.schema)}.runs where run_id = ${first.runId}`
    const conversations = await node.db.sql`select message_count from ${node.db.sql(node.db.schema)}.conversations where conversation_id = ${first.conversationId}`
    expect(runs[0].n).toBe(1)
    expect(conversations[0].message_count).toBe(2)
  })
})

describe("goal", () => {
  it("rounds continue until the independent check finds the goal met", async () => {
    const turn = await streamChat(node, { content: "/goal-after 2", goal: { statement: "the plan is written", maxRounds: 3 } })
    expect(turn.done.reply).toContain("Working on it (round 1).")
    expect(turn.done.reply).toContain("Goal reached: the plan is written")
    expect(turn.done.reply).not.toContain("round 3")
  })

  it("stops when the rounds run out", async () => {
    const turn = await streamChat(node, { content: "/goal-after 4", goal: { statement: "never", maxRounds: 2 } })
    expect(turn.done.reply).toContain("Working on it (round 2).")
    expect(turn.done.reply).not.toContain("Goal reached")
  })
})

describe("memory", () => {
  it("keeps the last 50 messages verbatim, summarises older ones, and the run records that it carried a summary", async () => {
    const first = await postJson(node, "assistant/ask", { content: "message number 1" })
    const conversationId = first.body.conversationPublicId
    for (let i = 2; i <= 27; i++) {
      const asked = await postJson(node, "assistant/ask", { content: `message number ${i}`, conversationId })
      expect(asked.status).toBe(200)
    }
    const memory = await postJson(node, "assistant/ask", { content: "/memory", conversationId })
    expect(memory.body.reply).toMatch(/^I see 49 earlier messages\. Summary: Summary of \d+ messages: message number 1/)
    const [row] = await node.db.sql`select carried_summary from ${node.db.sql(node.db.schema)}.runs where run_id = ${memory.body.runId}`
    expect(row.carried_summary).toBe(true)
    const [firstRun] = await node.db.sql`select carried_summary from ${node.db.sql(node.db.schema)}.runs where run_id = ${first.body.runId}`
    expect(firstRun.carried_summary).toBe(false)

    // about once every five turns (spec 8): ten turns more, and the summary is rewritten at the
    // fifth and the tenth after its last rewrite, never between
    const rewrites = async () =>
      (await eventsOf(node, `conversation:${first.body.conversationId}`)).filter((e) => e.type === "summary.rewritten").map((e) => e.payload.atTurn as number)
    const before = await eventually(rewrites, (turns) => turns.length > 0)
    const last = before.at(-1)!
    const turns = (await node.db.sql`select turn_count from ${node.db.sql(node.db.schema)}.conversations where conversation_id = ${first.body.conversationId}`)[0].turn_count as number
    for (let i = 1; i <= 10; i++) {
      const asked = await postJson(node, "assistant/ask", { content: `later message ${i}`, conversationId })
      expect(asked.status).toBe(200)
      expect(asked.body.runId).toMatch(/^tse_/)
    }
    const after = await eventually(rewrites, (atTurns) => atTurns.length >= before.length + 2, 10_000)
    await sleep(500)
    expect(await rewrites()).toEqual([...before, last + 5, last + 10])
    // each was due: the turns since the one before reached five only then
    expect(after.slice(before.length).every((atTurn) => atTurn > turns && atTurn <= turns + 10)).toBe(true)
  })
})

describe("keep-alive", () => {
  it("writes the comment : keep-alive after 15 quiet seconds", async () => {
    // four words in chunks of three: one quiet wait of 16 s between the chunks
    const turn = await streamChat(node, { content: "/slow 16000\n/long 4" })
    expect(turn.sequence.some((s) => s.kind === "comment" && s.text.trim() === "keep-alive")).toBe(true)
    expect(turn.done.reply.split(" ")).toHaveLength(4)
  }, 40_000)
})
