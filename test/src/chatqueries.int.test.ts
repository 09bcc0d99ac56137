/**
 * The chat read-model queries against real Postgres: an actor host on the embedded log projects
 * the conversation actor's events (a reply waits for the projection), and the queries read them
 * back. Ids in either form,
 * malformed ids not found, workspace scoping, history windows, and what the turn process and the
 * sweepers poll.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import {
  AnswerQuestion,
  AskQuestion,
  type ConversationCommand,
  FinishRun,
  ParkToolCall,
  RequestStop,
  ResolveApproval,
  RewriteSummary,
  StartTurn
} from "../../actors/conversation/protocol.ts"
import {
  findApproval,
  findConversation,
  findQuestion,
  findRun,
  findRunningTurn,
  loadHistory,
  olderMessages,
  overdueQuestions,
  staleRunningRuns
} from "../../src/assistant/Queries.ts"
import { reportNode } from "../../src/cluster/Queries.ts"
import type { PersonalDataError } from "../../src/audit/PersonalData.ts"
import { KeyManagement, noKeyManagement } from "../../src/marketplace/Envelope.ts"
import type * as Db from "../../streams/Db.ts"
import { hex } from "../support/env.ts"
import { startActorHost, type TestActorHost } from "../support/host.ts"

const PARTITIONS = 2

let actors: TestActorHost

const workspaceId = `wsp_${hex()}`
const conversationId = randomUUID()
const publicId = `cnv_${hex()}`
const carol = "usr_carol"
const usage = { promptTokens: 3, completionTokens: 2, totalTokens: 5 }

const send = (command: ConversationCommand, at: string) =>
  Effect.runPromise(actors.host.send(ConversationActor, conversationId, command, { commandId: randomUUID(), at, actor: `user:${carol}` }))

const read: TestActorHost["read"] = (effect) => actors.read(effect)
/** The history reads open sealed words; these rows are in clear, as without a master key. */
const readOpened = <A>(effect: Effect.Effect<A, Db.DbError | PersonalDataError, Db.Db | KeyManagement>) =>
  read(effect.pipe(Effect.provideService(KeyManagement, noKeyManagement), Effect.catchTags({ EncryptionNotConfigured: Effect.die, EnvelopeUnreadable: Effect.die })))

/** Projected rows no query of the platform reads (a turn hears these changes on the log tail). */
const questionRows = (questionIds: ReadonlyArray<string>) =>
  read(Effect.promise(() => actors.db.sql`
    select question_id, status, answer, reason from ${actors.db.table("questions")}
    where question_id = any(${questionIds as string[]}::text[]) order by question_id`))
const stopRequestedOf = (runId: string) =>
  read(Effect.promise(() => actors.db.sql`select stop_requested from ${actors.db.table("runs")} where run_id = ${runId}`)).then(([row]) => row.stop_requested)

const turn = (n: number, at: string, turnId: string | null = null) =>
  send(
    new StartTurn({
      conversationId,
      create: n === 1,
      publicId,
      orgId: "org_chat",
      workspaceId,
      userId: carol,
      apiKeyId: null,
      runId: `tse_${n}`,
      turnId,
      userMessageId: `msg_u${n}`,
      content: `question ${n}`,
      attachments: n === 1 ? ["gen_1"] : [],
      model: "offline",
      tier: null,
      effort: null,
      carriedSummary: false
    }),
    at
  )

const finish = (n: number, at: string) =>
  send(
    new FinishRun({ runId: `tse_${n}`, status: "finished", assistantMessageId: `msg_a${n}`, reply: `answer ${n}`, result: { reply: `answer ${n}`, stopped: false }, usage, error: null }),
    at
  )

beforeAll(async () => {
  actors = await startActorHost([ConversationActor], { partitions: PARTITIONS })
  // three finished turns (six messages), then a fourth turn still running
  await turn(1, "2024-05-01T12:00:00.000Z")
  await finish(1, "2024-05-01T12:00:10.000Z")
  await turn(2, "2024-05-01T12:01:00.000Z")
  await finish(2, "2024-05-01T12:01:10.000Z")
  await turn(3, "2024-05-01T12:02:00.000Z")
  await finish(3, "2024-05-01T12:02:10.000Z")
  await turn(4, "2024-05-01T12:03:00.000Z", "turn-4")
})

afterAll(() => actors.stop())

describe("conversations", () => {
  it("are found by UUID (in any case) or cnv_ id, within their workspace only", async () => {
    const expected = { conversationId, publicId, orgId: "org_chat", workspaceId, userId: carol }
    expect(await read(findConversation(workspaceId, conversationId))).toEqual(expected)
    expect(await read(findConversation(workspaceId, conversationId.toUpperCase()))).toEqual(expected)
    expect(await read(findConversation(workspaceId, publicId))).toEqual(expected)
    expect(await read(findConversation("wsp_other", conversationId))).toBeUndefined()
    expect(await read(findConversation(workspaceId, randomUUID()))).toBeUndefined()
  })

  it("a malformed id is simply not found", async () => {
    for (const id of ["", "nope", "cnv_xyz", `${publicId}0`, "apr_" + hex(), "'; select 1; --", conversationId.slice(1)]) {
      expect(await read(findConversation(workspaceId, id))).toBeUndefined()
    }
  })
})

describe("history", () => {
  it("the last messages in order, how many precede them, and the counts", async () => {
    const history = await readOpened(loadHistory(conversationId, 3))
    expect(history).toEqual({
      messages: [
        { messageId: "msg_u3", role: "user", content: "question 3", erased: false, attachments: [], position: 5 },
        { messageId: "msg_a3", role: "assistant", content: "answer 3", erased: false, attachments: [], position: 6 },
        { messageId: "msg_u4", role: "user", content: "question 4", erased: false, attachments: [], position: 7 }
      ],
      older: 4,
      summary: null,
      messageCount: 7,
      turnCount: 4
    })
  })

  it("by default up to 50 messages: all of them here", async () => {
    const history = await readOpened(loadHistory(conversationId))
    expect(history.older).toBe(0)
    expect(history.messages.map((m) => m.position)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(history.messages[0]).toEqual({ messageId: "msg_u1", role: "user", content: "question 1", erased: false, attachments: ["gen_1"], position: 1 })
  })

  it("older messages up to a position, for the summary", async () => {
    expect((await readOpened(olderMessages(conversationId, 4))).map((m) => m.messageId)).toEqual(["msg_u1", "msg_a1", "msg_u2", "msg_a2"])
  })

  it("an unknown conversation has an empty history", async () => {
    expect(await readOpened(loadHistory(randomUUID()))).toEqual({ messages: [], older: 0, summary: null, messageCount: 0, turnCount: 0 })
  })

  it("carries the rewritten summary", async () => {
    await send(new RewriteSummary({ summary: "carol asked three questions", coversMessages: 4, atTurn: 4 }), "2024-05-01T12:03:01.000Z")
    expect((await readOpened(loadHistory(conversationId, 3))).summary).toEqual({ text: "carol asked three questions", coversMessages: 4, atTurn: 4 })
  })
})

describe("approvals", () => {
  const approvalId = randomUUID()
  const approvalPublicId = `apr_${hex()}`
  const expiresAt = "2024-05-02T12:03:00.000Z"

  beforeAll(async () => {
    await send(
      new ParkToolCall({
        runId: "tse_4",
        approvalId,
        publicId: approvalPublicId,
        toolCallId: "call_1",
        capability: "nodes.delete",
        input: { nodeId: "n1", force: true },
        inputPreview: "delete n1",
        userId: carol,
        expiresAt
      }),
      "2024-05-01T12:03:02.000Z"
    )
  })

  it("are found by UUID or apr_ id, within their workspace; malformed ids are not found", async () => {
    const parked = {
      approvalId,
      publicId: approvalPublicId,
      conversationId,
      runId: "tse_4",
      toolCallId: "call_1",
      userId: carol,
      capability: "nodes.delete",
      input: { nodeId: "n1", force: true },
      inputPreview: "delete n1",
      status: "parked",
      expiresAt,
      executionRunId: null
    }
    expect(await readOpened(findApproval(workspaceId, approvalId))).toEqual(parked)
    expect(await readOpened(findApproval(workspaceId, approvalPublicId))).toEqual(parked)
    expect(await readOpened(findApproval("wsp_other", approvalId))).toBeUndefined()
    for (const id of ["apr_1", publicId, "x"]) expect(await readOpened(findApproval(workspaceId, id))).toBeUndefined()
  })

  it("keep a tool input that is a bare JSON string", async () => {
    const id = randomUUID()
    await send(
      new ParkToolCall({ runId: "tse_4", approvalId: id, publicId: `apr_${hex()}`, toolCallId: "call_2", capability: "nodes.get", input: "n1", inputPreview: "n1", userId: carol, expiresAt }),
      "2024-05-01T12:03:02.500Z"
    )
    expect(await readOpened(findApproval(workspaceId, id))).toMatchObject({ input: "n1", status: "parked" })
  })

  it("once approved, show the execution run, which is found as a running approval run", async () => {
    const decidedAt = "2024-05-01T12:03:03.000Z"
    const receipt = {
      version: "svc-approval-receipt-v1" as const,
      approvalId: approvalPublicId,
      orgId: "org_chat",
      workspaceId,
      capability: "nodes.delete",
      inputSha256: "ab".repeat(32),
      askedBy: carol,
      decidedBy: carol,
      decision: "approved" as const,
      decidedAt,
      keyId: "0123456789abcdef",
      signature: "c2lnbmVk"
    }
    await send(new ResolveApproval({ approvalId, decision: "approved", note: null, userId: carol, executionRunId: "tse_x", receipt, model: "offline" }), decidedAt)
    expect(await readOpened(findApproval(workspaceId, approvalPublicId))).toMatchObject({ status: "approved", executionRunId: "tse_x" })
    expect(await readOpened(findRun(workspaceId, "tse_x"))).toEqual({
      runId: "tse_x",
      conversationId,
      status: "running",
      reply: null,
      result: null,
      error: null,
      kind: "approval",
      userId: carol
    })
  })
})

describe("questions", () => {
  const deadline = "2024-05-01T12:08:00.000Z"

  beforeAll(async () => {
    await send(new AskQuestion({ runId: "tse_4", questionId: "qst_1", question: "which?", options: ["a", "b"], userId: carol, deadline }), "2024-05-01T12:03:04.000Z")
    await send(new AskQuestion({ runId: "tse_4", questionId: "qst_2", question: "when?", options: [], userId: carol, deadline }), "2024-05-01T12:03:04.000Z")
  })

  it("are found within their workspace", async () => {
    expect(await read(findQuestion(workspaceId, "qst_1"))).toEqual({ questionId: "qst_1", conversationId, runId: "tse_4", userId: carol, status: "waiting" })
    expect(await read(findQuestion("wsp_other", "qst_1"))).toBeUndefined()
  })

  it("overdue only once past the deadline, and only while waiting", async () => {
    expect(await read(overdueQuestions("2024-05-01T12:07:59.999Z", 10))).toEqual([])
    const overdue = await read(overdueQuestions(deadline, 10))
    expect(overdue.filter((q) => q.conversationId === conversationId).map((q) => q.questionId).sort()).toEqual(["qst_1", "qst_2"])
    await send(new AnswerQuestion({ questionId: "qst_1", userId: carol, answer: "a" }), "2024-05-01T12:04:00.000Z")
    expect((await read(overdueQuestions(deadline, 10))).filter((q) => q.conversationId === conversationId)).toEqual([{ questionId: "qst_2", conversationId }])
  })

  it("states: answered with its answer, or waiting", async () => {
    expect(await questionRows(["qst_1", "qst_2", "qst_unknown"])).toEqual([
      { question_id: "qst_1", status: "answered", answer: "a", reason: null },
      { question_id: "qst_2", status: "waiting", answer: null, reason: null }
    ])
  })
})

describe("runs", () => {
  it("the running turn by turn id and person; stop requests; stale running runs", async () => {
    expect(await read(findRunningTurn(workspaceId, "turn-4", carol))).toEqual({ runId: "tse_4", conversationId })
    expect(await read(findRunningTurn(workspaceId, "turn-4", "usr_dave"))).toBeUndefined()
    expect(await read(findRunningTurn("wsp_other", "turn-4", carol))).toBeUndefined()

    expect(await stopRequestedOf("tse_4")).toBe(false)
    await send(new RequestStop({ turnId: "turn-4", userId: carol }), "2024-05-01T12:05:00.000Z")
    expect(await stopRequestedOf("tse_4")).toBe(true)
    expect(await stopRequestedOf("tse_x")).toBe(false)

    // runs that name no node: only the longest a turn runs counts
    const stale = (before: string) =>
      read(staleRunningRuns({ beforeIso: before, settledIso: before, goneAfterMs: 15_000 }, 100)).then((runs) => runs.filter((r) => r.conversationId === conversationId).map((r) => r.runId))
    expect(await stale("2024-05-01T12:03:00.000Z")).toEqual([])
    expect(await stale("2024-05-01T12:03:00.001Z")).toEqual(["tse_4"])
    expect(await stale("2024-05-01T13:00:00.000Z")).toEqual(["tse_4", "tse_x"])
  })

  it("a run whose node is gone, or restarted since, is stale once settled; one whose node reports is not", async () => {
    const elsewhere = randomUUID()
    const startOn = (n: number, node: string, at: string) =>
      Effect.runPromise(actors.host.send(ConversationActor, elsewhere, new StartTurn({
        conversationId: elsewhere, create: n === 1, publicId: `cnv_${hex()}`, orgId: "org_chat", workspaceId, userId: carol, apiKeyId: null,
        runId: `tse_node_${n}`, turnId: null, userMessageId: `msg_node_${n}`, content: "hello", attachments: [], model: "offline",
        tier: null, effort: null, carriedSummary: false, node
      }), { commandId: randomUUID(), at, actor: `user:${carol}` }))
    await startOn(1, "node-live", "2024-05-01T12:00:00.000Z")
    await startOn(2, "node-gone", "2024-05-01T12:00:01.000Z")
    await startOn(3, "node-restarted", "2024-05-01T12:00:02.000Z")
    const report = (nodeId: string, startedAt: string) => read(reportNode({ nodeId, version: "1", draining: false, ready: [], startedAt }))
    await report("node-live", "2024-05-01T11:00:00.000Z")
    await report("node-restarted", "2024-05-01T12:30:00.000Z")
    const stale = (settledIso: string) =>
      read(staleRunningRuns({ beforeIso: "2000-01-01T00:00:00.000Z", settledIso, goneAfterMs: 15_000 }, 100))
        .then((runs) => runs.filter((r) => r.conversationId === elsewhere).map((r) => r.runId))
    // younger than a node's first report could be: none yet
    expect(await stale("2024-05-01T12:00:00.000Z")).toEqual([])
    expect(await stale("2024-05-01T13:00:00.000Z")).toEqual(["tse_node_2", "tse_node_3"])
    // every report late alike (the database was away): measured from the latest, nobody is gone for it
    const table = actors.db.table("cluster_nodes")
    await read(Effect.promise(() => actors.db.sql`update ${table} set seen_at = now() - interval '1 hour'`))
    expect(await stale("2024-05-01T13:00:00.000Z")).toEqual(["tse_node_2", "tse_node_3"])
    await read(Effect.promise(() => actors.db.sql`update ${table} set seen_at = seen_at - interval '16 seconds' where node_id = 'node-live'`))
    expect(await stale("2024-05-01T13:00:00.000Z")).toEqual(["tse_node_1", "tse_node_2", "tse_node_3"])
  })

  it("a finished run: its reply and result; it is no longer running, and its waiting question closed", async () => {
    await send(
      new FinishRun({ runId: "tse_4", status: "stopped", assistantMessageId: "msg_a4", reply: "partial", result: { reply: "partial", stopped: true }, usage, error: null }),
      "2024-05-01T12:05:01.000Z"
    )
    expect(await readOpened(findRun(workspaceId, "tse_4"))).toEqual({
      runId: "tse_4",
      conversationId,
      status: "stopped",
      reply: "partial",
      result: { reply: "partial", stopped: true },
      error: null,
      kind: "turn",
      userId: carol
    })
    expect(await read(findRunningTurn(workspaceId, "turn-4", carol))).toBeUndefined()
    expect(await questionRows(["qst_2"])).toEqual([{ question_id: "qst_2", status: "closed", answer: null, reason: "ended" }])
    expect((await read(staleRunningRuns({ beforeIso: "2024-05-01T13:00:00.000Z", settledIso: "2024-05-01T13:00:00.000Z", goneAfterMs: 15_000 }, 100))).filter((r) => r.conversationId === conversationId)).toEqual([{ runId: "tse_x", conversationId }])
    expect((await readOpened(loadHistory(conversationId, 1))).messages).toEqual([{ messageId: "msg_a4", role: "assistant", content: "partial", erased: false, attachments: [], position: 8 }])
  })

  it("a failed run: its error; unknown and other workspaces' runs are not found", async () => {
    const error = { code: "bad_gateway", reason: "model_unavailable", message: "the model did not answer" }
    await send(new FinishRun({ runId: "tse_x", status: "failed", assistantMessageId: null, reply: "", result: null, usage, error }), "2024-05-01T12:05:02.000Z")
    expect(await readOpened(findRun(workspaceId, "tse_x"))).toMatchObject({ status: "failed", reply: "", result: null, error })
    expect(await readOpened(findRun(workspaceId, "tse_nope"))).toBeUndefined()
    expect(await readOpened(findRun("wsp_other", "tse_x"))).toBeUndefined()
  })
})
