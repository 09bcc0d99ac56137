/**
 * What a chat page reads back after a reload, over real HTTP with the offline model:
 * conversation.list and conversation.get (a thread rebuilt: messages, each run's turn result and
 * approvals), run.list and run.get (a run's transcript), run.summarize (written by the model and
 * metered like a turn), spend.get (the workspace's month, its budget and what is left), and
 * approval.list (the inbox, marking what the caller may answer). A person reads only their own
 * conversations and runs; an organization key reads none of them, on REST, MCP and the agent
 * surface (spec 5 rule 3).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postJson, streamChat, waitForEvent } from "../support/chat.ts"
import { steppedClock } from "../support/clock.ts"
import { connectMcp } from "../support/mcp.ts"
import { addPerson, callWithCookie, cliLogin, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call, callAsAgent, eventually, expectError, type Reply } from "./client.ts"

let node: TestNode
const clock = steppedClock()
let alice: Person
let aliceCookie: string
let bobCookie: string
let ownerCookie: string
let aliceMcp: Client
let aliceCli: string
let orgMcp: Client

beforeAll(async () => {
  node = await startTestNode({}, { clock: clock.clock })
  alice = await addPerson(node, "alice", { org: "member", workspace: "member" })
  aliceCookie = (await signIn(node.baseUrl, alice)).cookie
  bobCookie = (await signIn(node.baseUrl, await addPerson(node, "bob", { org: "member", workspace: "member" }))).cookie
  ownerCookie = (await signIn(node.baseUrl, { email: node.bootstrap.ownerEmail!, password: node.bootstrap.ownerPassword! })).cookie
  aliceCli = await cliLogin(node, alice)
  aliceMcp = await connectMcp(node.baseUrl, aliceCli, "svc-e2e-conversations")
  orgMcp = await connectMcp(node.baseUrl, node.bootstrap.orgKey, "svc-e2e-conversations")
}, 60_000)

afterAll(async () => {
  await Promise.all([aliceMcp?.close(), orgMcp?.close()])
  await node?.stop()
})

const placePath = (capability: string) => `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/${capability.replaceAll(".", "/")}`
const as = (cookie: string, capability: string, input: unknown = {}): Promise<Reply> => callWithCookie(node.baseUrl, cookie, placePath(capability), input)
const ok = (reply: Reply) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body
}

/** A turn of Alice's (or of whoever's cookie), read to its end. */
const chat = async (content: string, options: { readonly conversationId?: string; readonly cookie?: string } = {}) => {
  const turn = await streamChat(node, { content, ...(options.conversationId === undefined ? {} : { conversationId: options.conversationId }) }, { cookie: options.cookie ?? aliceCookie })
  expect(turn.status).toBe(200)
  expect(turn.done).not.toBe("[DONE]")
  return { result: turn.done, usage: turn.events.find((e) => e.type === "usage").usage, events: turn.events }
}

const toolCall = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult
const toolError = (result: CallToolResult) => {
  expect(result.isError).toBe(true)
  return JSON.parse((result.content[0] as { text: string }).text)
}

/** A capability on the agent surface (what a turn's tool call runs) as the key, stated as REST states it. */
const asAgent = (key: string, capability: string, input: unknown) => callAsAgent(node, key, capability, input)

describe("a conversation rebuilt after a reload", () => {
  let planning: any
  let other: any

  it("conversation.list: your conversations, the latest message first, titled by their first message and cursor-paged", async () => {
    const long = `Plan   the\n offsite: ${"agenda ".repeat(20)}`
    planning = (await chat(long)).result
    await chat("/tool system__ping {}", { conversationId: planning.conversationPublicId })
    other = (await chat("a second thread")).result

    const listed = ok(await as(aliceCookie, "conversation.list"))
    expect(listed.nextCursor).toBeNull()
    expect(listed.conversations).toEqual([
      { publicId: other.conversationPublicId, title: "a second thread", messageCount: 2, createdAt: expect.any(String), lastMessageAt: expect.any(String) },
      { publicId: planning.conversationPublicId, title: expect.any(String), messageCount: 4, createdAt: expect.any(String), lastMessageAt: expect.any(String) }
    ])
    const title: string = listed.conversations[1].title
    expect(title).toHaveLength(80)
    expect(title.startsWith("Plan the offsite: agenda agenda")).toBe(true)
    expect(title.endsWith("…")).toBe(true)
    const [second, first] = listed.conversations
    expect(Date.parse(first.lastMessageAt)).toBeGreaterThan(Date.parse(first.createdAt))
    expect(Date.parse(second.lastMessageAt)).toBeGreaterThanOrEqual(Date.parse(first.lastMessageAt))

    // a new message moves its conversation to the top
    await chat("one more thing", { conversationId: planning.conversationId })
    const paged = ok(await as(aliceCookie, "conversation.list", { limit: 1 }))
    expect(paged.conversations.map((c: any) => c.publicId)).toEqual([planning.conversationPublicId])
    expect(paged.nextCursor).toEqual(expect.any(String))
    const rest = ok(await as(aliceCookie, "conversation.list", { limit: 1, cursor: paged.nextCursor }))
    expect(rest.conversations.map((c: any) => c.publicId)).toEqual([other.conversationPublicId])
    expect(rest.nextCursor).toBeNull()
    expectError(await as(aliceCookie, "conversation.list", { cursor: "not-a-cursor" }), 400, "bad_request", "invalid_cursor")

    // Bob has none of them
    expect(ok(await as(bobCookie, "conversation.list")).conversations).toEqual([])
  })

  it("conversation.get: every message in order and each run's turn result, by cnv_ id or UUID", async () => {
    const thread = ok(await as(aliceCookie, "conversation.get", { conversationId: planning.conversationPublicId }))
    expect(ok(await as(aliceCookie, "conversation.get", { conversationId: planning.conversationId }))).toEqual(thread)
    expect(thread).toMatchObject({ conversationId: planning.conversationId, publicId: planning.conversationPublicId, messageCount: 6 })
    expect(thread.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"])
    expect(thread.messages[2]).toEqual({
      messageId: expect.any(String),
      role: "user",
      content: "/tool system__ping {}",
      erased: false,
      attachments: [],
      createdAt: expect.any(String),
      runId: expect.stringMatching(/^tse_/)
    })
    expect(thread.messages[3].content).toContain('Tool system__ping returned: {"pong":true}')
    expect(thread.runs).toHaveLength(3)
    const ping = thread.runs[1]
    expect(ping).toMatchObject({
      runId: thread.messages[2].runId,
      conversationId: planning.conversationPublicId,
      kind: "turn",
      status: "finished",
      toolCalls: [{ toolCallId: expect.any(String), toolName: "system.ping", outcome: "completed", durationMs: expect.any(Number) }],
      parkedCards: [],
      stopped: false,
      execution: null,
      output: null,
      approvals: [],
      error: null
    })
    expect(thread.messages[3].runId).toBe(ping.runId)
  })

  it("another person's conversation is not found (404 conversation_not_found), as one that never was", async () => {
    expectError(await as(bobCookie, "conversation.get", { conversationId: planning.conversationPublicId }), 404, "not_found", "conversation_not_found")
    expectError(await as(aliceCookie, "conversation.get", { conversationId: "cnv_nope" }), 404, "not_found", "conversation_not_found")
    // nor may Bob list its runs
    expectError(await as(bobCookie, "run.list", { conversationId: planning.conversationId }), 404, "not_found", "conversation_not_found")
  })

  it("a workspace key reads its creator's conversations, not Alice's", async () => {
    const mine = (await streamChat(node, { content: "from the key" })).done
    const listed = ok(await call(node, "conversation.list", {}))
    expect(listed.conversations.map((c: any) => c.publicId)).toEqual([mine.conversationPublicId])
    expectError(await call(node, "conversation.get", { conversationId: planning.conversationPublicId }), 404, "not_found", "conversation_not_found")
  })
})

describe("runs and their transcripts", () => {
  it("run.list: your runs, the latest first, by conversation or status; run.get: the whole record", async () => {
    const { result, usage } = await chat("/tool system__ping {}")
    const all = ok(await as(aliceCookie, "run.list"))
    expect(all.runs[0]).toEqual({
      runId: result.runId,
      conversationId: result.conversationPublicId,
      kind: "turn",
      status: "finished",
      turnId: null,
      model: expect.stringMatching(/^offline:/),
      tier: expect.any(String),
      effort: null,
      startedAt: expect.any(String),
      endedAt: expect.any(String),
      usage,
      error: null,
      title: null,
      tags: [],
      pinned: false
    })
    const started = all.runs.map((r: any) => Date.parse(r.startedAt))
    expect(started).toEqual([...started].sort((a, b) => b - a))
    expect(ok(await as(aliceCookie, "run.list", { conversationId: result.conversationPublicId })).runs.map((r: any) => r.runId)).toEqual([result.runId])
    expect(ok(await as(aliceCookie, "run.list", { status: "running" })).runs).toEqual([])
    const firstPage = ok(await as(aliceCookie, "run.list", { limit: 2 }))
    const secondPage = ok(await as(aliceCookie, "run.list", { limit: 2, cursor: firstPage.nextCursor }))
    expect([...firstPage.runs, ...secondPage.runs].map((r: any) => r.runId)).toEqual(all.runs.slice(0, 4).map((r: any) => r.runId))

    const run = ok(await as(aliceCookie, "run.get", { runId: result.runId }))
    expect(run).toMatchObject({
      runId: result.runId,
      userId: alice.userId,
      kind: "turn",
      status: "finished",
      userMessage: { messageId: result.userMessageId, content: "/tool system__ping {}", attachments: [] },
      reply: result.reply,
      toolCalls: result.toolCalls,
      parkedCards: [],
      stopped: false,
      execution: null,
      output: null,
      approvals: [],
      questions: [],
      usage,
      error: null,
      approvalId: null,
      carriedSummary: false
    })
    expect(run.durationMs).toBe(Date.parse(run.endedAt) - Date.parse(run.startedAt))
    // Bob, and a run that never was: not found
    expectError(await as(bobCookie, "run.get", { runId: result.runId }), 404, "not_found", "run_not_found")
    expectError(await as(aliceCookie, "run.get", { runId: "tse_nope" }), 404, "not_found", "run_not_found")
  })

  it("run.get holds a run's questions and their answers", async () => {
    const events: Array<any> = []
    const streaming = streamChat(node, { content: "/ask Which colour? | red | blue" }, { cookie: aliceCookie, onEvent: (e) => events.push(e) })
    const question = await waitForEvent(events, (e) => e.type === "question")
    expect((await postJson(node, "assistant/question/answer", { questionId: question.id, answer: "blue" }, { cookie: aliceCookie })).body).toEqual({ found: true })
    const turn = await streaming
    const run = ok(await as(aliceCookie, "run.get", { runId: turn.done.runId }))
    expect(run.questions).toEqual([
      { questionId: question.id, question: "Which colour?", options: ["red", "blue"], status: "answered", answer: "blue", reason: null, askedAt: expect.any(String), endedAt: expect.any(String) }
    ])
    expect(run.toolCalls).toEqual([expect.objectContaining({ toolName: "ask_user", outcome: "completed" })])
  })

  it("over MCP, a CLI login reads the same run as its session does over REST", async () => {
    const [latest] = ok(await as(aliceCookie, "run.list", { limit: 1 })).runs
    const overMcp = await toolCall(aliceMcp, "run.get", { runId: latest.runId })
    expect(overMcp.isError).toBeFalsy()
    expect(overMcp.structuredContent).toEqual(ok(await as(aliceCookie, "run.get", { runId: latest.runId })))
  })

  it("the agent reads your runs as a tool: a turn calls run.list", async () => {
    const { result, events } = await chat("/tool run__list {\"limit\":1}")
    const end = events.find((e) => e.type === "tool-call-end")
    expect(end).toMatchObject({ status: "completed", output: { runs: [expect.objectContaining({ runId: expect.stringMatching(/^tse_/) })] } })
    expect(result.toolCalls).toEqual([expect.objectContaining({ toolName: "run.list", outcome: "completed" })])
  })
})

describe("approvals: the inbox and the thread", () => {
  const newNote = async () => {
    expect((await call(node, "schema.define_label", { label: "Note", properties: {} })).status).toBe(200)
    return ok(await call(node, "node.create", { label: "Note", properties: {} })).nodeId as string
  }

  it("approval.list shows the workspace's waiting calls, marks yours, and drops one once answered; the thread shows what became of it", async () => {
    const nodeId = await newNote()
    const { result, events } = await chat(`/tool node__delete {"nodeId":"${nodeId}"}`)
    const card = events.find((e) => e.type === "approval-required")

    const inbox = ok(await as(aliceCookie, "approval.list"))
    const listed = inbox.approvals.find((a: any) => a.approvalId === card.approvalId)
    expect(listed).toEqual({
      approvalId: card.approvalId,
      capability: "node.delete",
      inputPreview: `{"nodeId":"${nodeId}"}`,
      requestedBy: alice.userId,
      requestedByName: "alice",
      conversationId: result.conversationPublicId,
      runId: result.runId,
      parkedAt: expect.any(String),
      expiresAt: card.expiresAt,
      canAnswer: true
    })
    // Bob sees who asked and what, but may not answer it, nor learn where it was asked: no conversation or run of Alice's
    const seenByBob = ok(await as(bobCookie, "approval.list")).approvals.find((a: any) => a.approvalId === card.approvalId)
    expect(seenByBob).toEqual({ ...listed, conversationId: null, runId: null, canAnswer: false })

    const parked = ok(await as(aliceCookie, "run.get", { runId: result.runId }))
    expect(parked.parkedCards).toEqual([{ approvalId: card.approvalId, capability: "node.delete", expiresAt: card.expiresAt }])
    expect(parked.approvals).toEqual([
      { approvalId: card.approvalId, capability: "node.delete", inputPreview: listed.inputPreview, status: "pending", requestedBy: alice.userId, expiresAt: card.expiresAt, resolvedAt: null, note: null, executionRunId: null, receipt: null }
    ])

    const resolved = await postJson(node, "agent/approvals/resolve", { approvalId: card.approvalId, decision: "approved", note: "go" }, { cookie: aliceCookie })
    expect(resolved.status).toBe(200)
    const executionRunId = resolved.body.execution.runId
    expect(ok(await as(aliceCookie, "approval.list")).approvals.map((a: any) => a.approvalId)).not.toContain(card.approvalId)

    const thread = ok(await as(aliceCookie, "conversation.get", { conversationId: result.conversationPublicId }))
    const parkingRun = thread.runs.find((r: any) => r.runId === result.runId)
    expect(parkingRun.approvals).toEqual([expect.objectContaining({ approvalId: card.approvalId, status: "approved", note: "go", executionRunId, resolvedAt: expect.any(String) })])
    // the approved call ran as a run of its own, in the same thread, with what the call answered
    expect(thread.runs.find((r: any) => r.runId === executionRunId)).toMatchObject({
      kind: "approval",
      status: "finished",
      execution: { status: "succeeded", runId: executionRunId },
      output: { nodeId, deleted: true },
      toolCalls: []
    })
    expect(parkingRun.output).toBeNull()
    expect(ok(await as(aliceCookie, "run.get", { runId: executionRunId }))).toMatchObject({
      kind: "approval",
      approvalId: card.approvalId,
      userMessage: null,
      output: { nodeId, deleted: true }
    })
  })
})

describe("run.summarize and spend.get", () => {
  it("a run's summary is written by the model from its transcript, and its tokens count in the workspace's spend", async () => {
    const { result } = await chat("/tool system__ping {}")
    const spendOf = async () => ok(await as(aliceCookie, "spend.get"))
    // the turn's own charge lands after it answered
    const before = await eventually(spendOf, (spend) => spend.spent === spend.credits)
    const summarized = ok(await as(aliceCookie, "run.summarize", { runId: result.runId }))
    expect(summarized).toEqual({
      runId: result.runId,
      summary: "Summary of 1 messages: Request: /tool system__ping {} Tool call: system.ping (completed)",
      model: expect.stringMatching(/^offline:/),
      usage: { promptTokens: expect.any(Number), completionTokens: expect.any(Number), totalTokens: expect.any(Number) }
    })
    expect(summarized.usage.totalTokens).toBeGreaterThan(0)
    const after = await spendOf()
    // what the budget counts grew by the summary; the runs' tokens did not
    expect(after.spent).toBe(before.spent + summarized.usage.totalTokens)
    expect(after.totalTokens).toBe(before.totalTokens)

    expectError(await as(bobCookie, "run.summarize", { runId: result.runId }), 404, "not_found", "run_not_found")
  })

  it("spend.get: this month's runs by day and by model, and the workspace budget with what is left", async () => {
    const spendOf = async () => ok(await as(aliceCookie, "spend.get"))
    const before = await spendOf()
    const { usage } = await chat("count these tokens")
    const after = await eventually(spendOf, (spend) => spend.runs === before.runs + 1 && spend.spent === before.spent + usage.totalTokens)
    const now = new Date(clock.now()).toISOString()
    expect(after).toMatchObject({
      month: now.slice(0, 7),
      spent: before.spent + usage.totalTokens,
      budget: null,
      remaining: null,
      runs: before.runs + 1,
      promptTokens: before.promptTokens + usage.promptTokens,
      completionTokens: before.completionTokens + usage.completionTokens,
      totalTokens: before.totalTokens + usage.totalTokens,
      credits: before.credits + usage.totalTokens
    })
    const sum = (rows: ReadonlyArray<any>, field: string) => rows.reduce((total, row) => total + row[field], 0)
    for (const breakdown of [after.byDay, after.byModel]) {
      for (const field of ["runs", "promptTokens", "completionTokens", "totalTokens", "credits"]) expect(sum(breakdown, field)).toBe(after[field])
    }
    expect(after.byDay.at(-1)).toMatchObject({ day: now.slice(0, 10) })
    expect(after.byModel).toEqual([expect.objectContaining({ model: expect.stringMatching(/^offline:/), runs: after.runs })])

    // the Owner sets a budget: what is left of it follows
    const budget = after.spent + 1_000_000
    expect((await as(ownerCookie, "workspace.budget.set", { monthlyBudget: budget })).status).toBe(200)
    expect(await spendOf()).toMatchObject({ budget, remaining: budget - after.spent })
    expect((await as(ownerCookie, "workspace.budget.set", { monthlyBudget: null })).status).toBe(200)
  })
})

describe("run.update (title, tags, pinned)", () => {
  it("edits what is named, keeps the rest, and shows the edits in run.get, run.list and the thread; over REST, MCP and the agent surface", async () => {
    const { result } = await chat("plan the launch")
    const fresh = ok(await as(aliceCookie, "run.get", { runId: result.runId }))
    expect(fresh).toMatchObject({ title: null, tags: [], pinned: false })
    const titled = ok(await as(aliceCookie, "run.update", { runId: result.runId, title: "Launch plan", tags: ["launch", "q3", "launch"] }))
    expect(titled).toMatchObject({ runId: result.runId, title: "Launch plan", tags: ["launch", "q3"], pinned: false, reply: fresh.reply })
    const pinned = await toolCall(aliceMcp, "run.update", { runId: result.runId, pinned: true, workspace: `${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}` })
    expect(pinned.isError).not.toBe(true)
    expect(pinned.structuredContent).toMatchObject({ title: "Launch plan", tags: ["launch", "q3"], pinned: true })
    const read = ok(await as(aliceCookie, "run.get", { runId: result.runId }))
    expect(read).toMatchObject({ title: "Launch plan", tags: ["launch", "q3"], pinned: true })
    const listed = ok(await as(aliceCookie, "run.list", { limit: 100 })).runs.find((r: any) => r.runId === result.runId)
    expect(listed).toMatchObject({ title: "Launch plan", tags: ["launch", "q3"], pinned: true })
    const thread = ok(await as(aliceCookie, "conversation.get", { conversationId: result.conversationId }))
    expect(thread.runs.find((r: any) => r.runId === result.runId)).toMatchObject({ title: "Launch plan", pinned: true })
    // a null title clears it; the rest stays
    expect(ok(await as(aliceCookie, "run.update", { runId: result.runId, title: null }))).toMatchObject({ title: null, tags: ["launch", "q3"], pinned: true })
    expect(ok(await as(aliceCookie, "run.get", { runId: result.runId }))).toMatchObject({ title: null, tags: ["launch", "q3"], pinned: true })
  })

  it("on the agent surface for the run's person; another person's run is not found; limits are 400", async () => {
    const { result } = await chat("/tool system__ping {}")
    expect(ok(await asAgent(aliceCli, "run.update", { runId: result.runId, tags: ["agent"] }))).toMatchObject({ runId: result.runId, tags: ["agent"] })
    // a workspace key acts as its creator, whose run this is not
    expectError(await asAgent(node.bootstrap.workspaceKey, "run.update", { runId: result.runId, pinned: true }), 404, "not_found", "run_not_found")
    expectError(await as(bobCookie, "run.update", { runId: result.runId, pinned: true }), 404, "not_found", "run_not_found")
    expectError(await as(aliceCookie, "run.update", { runId: result.runId, title: "x".repeat(201) }), 400, "bad_request", "invalid_input")
    expectError(await as(aliceCookie, "run.update", { runId: result.runId, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }), 400, "bad_request", "invalid_input")
    expect(ok(await as(aliceCookie, "run.get", { runId: result.runId }))).toMatchObject({ title: null, tags: ["agent"], pinned: false })
  })
})

describe("an organization key reads no runs, transcripts or spend (spec 5 rule 3)", () => {
  const refused: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ["conversation.list", {}],
    ["conversation.get", { conversationId: "cnv_0123456789abcdef0123456789abcdef" }],
    ["run.list", {}],
    ["run.get", { runId: "tse_anything" }],
    ["run.summarize", { runId: "tse_anything" }],
    ["run.update", { runId: "tse_anything", pinned: true }],
    ["spend.get", {}],
    ["approval.list", {}]
  ]

  it("403 forbidden on REST, MCP and the agent surface alike", async () => {
    const workspace = `${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
    for (const [capability, input] of refused) {
      const overRest = await call(node, capability, input, { key: node.bootstrap.orgKey })
      expectError(overRest, 403, "forbidden", undefined)
      expect(toolError(await toolCall(orgMcp, capability, { ...input, workspace }))).toEqual(overRest.body)
      const overAgent = await asAgent(node.bootstrap.orgKey, capability, input)
      expectError(overAgent, 403, "forbidden", undefined)
      expect(overAgent.body).toEqual(overRest.body)
    }
  })

  it("while a workspace key reads them on the agent surface", async () => {
    expect((await asAgent(node.bootstrap.workspaceKey, "spend.get", {})).status).toBe(200)
    expect((await asAgent(node.bootstrap.workspaceKey, "run.list", {})).status).toBe(200)
  })
})

describe("an approval left unanswered", () => {
  it("leaves the inbox once it expires, and the thread shows it expired", async () => {
    expect((await call(node, "schema.define_label", { label: "Note", properties: {} })).status).toBe(200)
    const nodeId = ok(await call(node, "node.create", { label: "Note", properties: {} })).nodeId
    const { result, events } = await chat(`/tool node__delete {"nodeId":"${nodeId}"}`)
    const card = events.find((e) => e.type === "approval-required")
    expect(ok(await as(aliceCookie, "approval.list")).approvals.map((a: any) => a.approvalId)).toContain(card.approvalId)
    clock.advance(25 * 60 * 60 * 1000)
    // a day later: Alice signs in again
    aliceCookie = (await signIn(node.baseUrl, alice)).cookie
    expect(ok(await as(aliceCookie, "approval.list")).approvals.map((a: any) => a.approvalId)).not.toContain(card.approvalId)
    const thread = ok(await as(aliceCookie, "conversation.get", { conversationId: result.conversationId }))
    expect(thread.runs[0].approvals).toEqual([expect.objectContaining({ approvalId: card.approvalId, status: "expired", resolvedAt: null })])
  })
})
