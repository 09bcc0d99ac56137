/**
 * The conversation actor (`conversation:<conversationId>`) as decider specifications: turns that
 * start (and create) a conversation, parked tool calls resolved once by their asking person before
 * they expire, questions answered or closed, stops by turn id and person, runs that end once, and
 * summaries; then the rows its projection writes into conversations, messages, runs, approvals
 * and questions.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import { ApprovalExpired, ConversationNotFound, QuestionNotFound, ReceiptMismatch, RunNotFound, TurnIdInUse, TurnNotFound } from "../../actors/conversation/errors.ts"
import {
  ApprovalResolved,
  ConversationStarted,
  type ConversationEvent,
  MessageSaved,
  type OpenRun,
  QuestionAnswered,
  QuestionAsked,
  QuestionClosed,
  RunFinished,
  RunStarted,
  RunStopRequested,
  RunStreamed,
  RunTaped,
  RunUpdated,
  SummaryRewritten,
  ToolCallParked
} from "../../actors/conversation/events.ts"
import {
  AnswerQuestion,
  AskQuestion,
  CloseQuestion,
  type ConversationCommand,
  FinishRun,
  ParkToolCall,
  RecordStream,
  RequestStop,
  ResolveApproval,
  RewriteSummary,
  StartTurn,
  UpdateRun
} from "../../actors/conversation/protocol.ts"
import { ConversationState } from "../../actors/conversation/state.ts"
import { keyOf } from "../../actors/kernel.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const T0 = "2024-05-01T12:00:00.000Z"
const T1 = "2024-05-01T12:01:00.000Z"
const T2 = "2024-05-01T12:02:00.000Z"
const T3 = "2024-05-01T12:03:00.000Z"
const EXPIRES = "2024-05-02T12:01:00.000Z"
const LATE = "2024-05-02T12:01:00.001Z"
const DEADLINE = "2024-05-01T12:06:00.000Z"

const conversationId = "6f0c2b1e-8a7d-4c3b-9e21-5d4f3a2b1c0d"
const publicId = "cnv_0123456789abcdef0123456789abcdef"
const carol = "usr_carol"
const dave = "usr_dave"
const at = (time: string) => meta({ at: time })

const turn = {
  conversationId,
  create: true,
  publicId,
  orgId: "org_1",
  workspaceId: "wsp_1",
  userId: carol,
  apiKeyId: null,
  runId: "tse_1",
  turnId: "turn-1",
  userMessageId: "msg_u1",
  content: "plan the release",
  attachments: ["gen_a"],
  model: "offline",
  tier: "balanced",
  effort: "low",
  carriedSummary: false,
  node: "node-a"
}
const turnStart = { turnId: "turn-1", kind: "turn" as const, userId: carol, apiKeyId: null, model: "offline", tier: "balanced", effort: "low", carriedSummary: false, approvalId: null, node: "node-a" }

const started = new ConversationStarted({ conversationId, publicId, orgId: "org_1", workspaceId: "wsp_1", userId: carol, startedAt: T0 })
const userSaved = new MessageSaved({ conversationId, messageId: "msg_u1", runId: "tse_1", role: "user", content: "plan the release", attachments: ["gen_a"], savedAt: T0 })
const runStarted = new RunStarted({ conversationId, runId: "tse_1", ...turnStart, startedAt: T0 })
const openRun: OpenRun = { ...turnStart, startedAt: T0, stopRequested: false }

const call = {
  runId: "tse_1",
  approvalId: "9a8b7c6d-1111-4222-8333-444455556666",
  publicId: "apr_0123456789abcdef0123456789abcdef",
  toolCallId: "call_1",
  capability: "nodes.delete",
  input: { nodeId: "n1" },
  inputPreview: "delete node n1",
  userId: carol,
  expiresAt: EXPIRES
}
const { approvalId } = call
const { approvalId: _a, ...parkedCall } = call
const parked = new ToolCallParked({ conversationId, ...call, parkedAt: T1 })
const parkedAsStored = { ...parkedCall, parkedAt: T1 }

const question = { runId: "tse_1", questionId: "qst_1", question: "which branch?", options: ["main", "next"], userId: carol, deadline: DEADLINE }
const { questionId: _q, ...askedFields } = question
const asked = new QuestionAsked({ conversationId, ...question, askedAt: T1 })
const askedAsStored = { ...askedFields, askedAt: T1 }

const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 }
const result = { conversationId, reply: "done", stopped: false }
const finishing = { runId: "tse_1", status: "finished" as const, assistantMessageId: "msg_a1", reply: "done", result, usage, error: null }
const finished = new RunFinished({ conversationId, ...finishing, endedAt: T3, run: openRun })
const assistantSaved = new MessageSaved({ conversationId, messageId: "msg_a1", runId: "tse_1", role: "assistant", content: "done", attachments: [], savedAt: T3 })

const opened: ReadonlyArray<ConversationEvent> = [started, userSaved, runStarted]
/** The receipt the shell signs for carol's decision at a time (the signature is the shell's: the decider only records it). */
const receiptOf = (decidedAt: string, decision: "approved" | "denied" = "approved") => ({
  version: "svc-approval-receipt-v1" as const,
  approvalId: call.publicId,
  orgId: "org_1",
  workspaceId: "wsp_1",
  capability: "nodes.delete",
  inputSha256: "ab".repeat(32),
  askedBy: carol,
  decidedBy: carol,
  decision,
  decidedAt,
  keyId: "0123456789abcdef",
  signature: "c2lnbmVk"
})
const resolve = { approvalId, decision: "approved" as const, note: "go ahead", userId: carol, executionRunId: "tse_x", model: "offline", receipt: receiptOf(T2) }
const { model: _m, ...decided } = resolve
const approved = new ApprovalResolved({ conversationId, orgId: "org_1", ...decided, resolvedAt: T2, parked: parkedAsStored })
const executionStarted = new RunStarted({
  conversationId,
  runId: "tse_x",
  turnId: null,
  kind: "approval",
  userId: carol,
  apiKeyId: null,
  model: "offline",
  tier: null,
  effort: null,
  carriedSummary: false,
  approvalId,
  startedAt: T2
})

const conversation = spec(ConversationActor)

type Case = readonly [name: string, given: ReadonlyArray<ConversationEvent>, command: ConversationCommand, time: string, outcome: ReadonlyArray<ConversationEvent> | unknown]

const run = (table: ReadonlyArray<Case>) => {
  for (const [name, given, command, time, outcome] of table) {
    it(name, () => {
      const when = conversation.given(given).when(command, at(time))
      if (Array.isArray(outcome)) when.then(outcome)
      else when.thenThrows(outcome as never)
    })
  }
}

describe("starting a turn", () =>
  run([
    ["creates the conversation, saves the user's message and starts the run", [], new StartTurn(turn), T0, opened],
    [
      "continues an existing conversation",
      [...opened, finished],
      new StartTurn({ ...turn, create: false, runId: "tse_2", userMessageId: "msg_u2", turnId: null, carriedSummary: true }),
      T3,
      [
        new MessageSaved({ ...userSaved, messageId: "msg_u2", runId: "tse_2", savedAt: T3 }),
        new RunStarted({ ...runStarted, runId: "tse_2", turnId: null, carriedSummary: true, startedAt: T3 })
      ]
    ],
    [
      "a creating turn for a conversation that exists continues it (a retry)",
      opened,
      new StartTurn({ ...turn, runId: "tse_2", userMessageId: "msg_u2", turnId: "turn-2" }),
      T1,
      [
        new MessageSaved({ ...userSaved, messageId: "msg_u2", runId: "tse_2", savedAt: T1 }),
        new RunStarted({ ...runStarted, runId: "tse_2", turnId: "turn-2", startedAt: T1 })
      ]
    ],
    ["a turn id of a turn still running here: a cancel could not tell them apart", opened, new StartTurn({ ...turn, runId: "tse_2", userMessageId: "msg_u2" }), T1, new TurnIdInUse({ turnId: turn.turnId! })],
    [
      "a turn id whose turn has ended may be used again",
      [...opened, finished],
      new StartTurn({ ...turn, create: false, runId: "tse_2", userMessageId: "msg_u2" }),
      T3,
      [new MessageSaved({ ...userSaved, messageId: "msg_u2", runId: "tse_2", savedAt: T3 }), new RunStarted({ ...runStarted, runId: "tse_2", startedAt: T3 })]
    ],
    ["a conversation that does not exist, without create", [], new StartTurn({ ...turn, create: false }), T0, new ConversationNotFound({ conversationId })],
    ["a conversation of another workspace", opened, new StartTurn({ ...turn, workspaceId: "wsp_2", create: false }), T1, new ConversationNotFound({ conversationId })],
    ["a conversation of another workspace, even with create", opened, new StartTurn({ ...turn, workspaceId: "wsp_2" }), T1, new ConversationNotFound({ conversationId })],
    ["another person's conversation in the same workspace", opened, new StartTurn({ ...turn, userId: "usr_someone_else", create: false }), T1, new ConversationNotFound({ conversationId })]
  ]))

describe("parking a tool call", () =>
  run([
    ["of a running run", opened, new ParkToolCall(call), T1, [parked]],
    ["of a run that ended", [...opened, finished], new ParkToolCall(call), T3, new RunNotFound({ runId: "tse_1" })],
    ["of an unknown run", opened, new ParkToolCall({ ...call, runId: "tse_9" }), T1, new RunNotFound({ runId: "tse_9" })],
    ["in a conversation that does not exist", [], new ParkToolCall(call), T1, new RunNotFound({ runId: "tse_1" })]
  ]))

describe("resolving an approval", () =>
  run([
    ["approved by the asking person: the execution run starts in the same decision", [...opened, parked], new ResolveApproval(resolve), T2, [approved, executionStarted]],
    [
      "after the turn that parked it ended",
      [...opened, parked, finished],
      new ResolveApproval({ ...resolve, receipt: receiptOf(T3) }),
      T3,
      [new ApprovalResolved({ ...approved, resolvedAt: T3, receipt: receiptOf(T3) }), new RunStarted({ ...executionStarted, startedAt: T3 })]
    ],
    [
      "denied: no run, and no execution run id",
      [...opened, parked],
      new ResolveApproval({ ...resolve, decision: "denied", note: null, receipt: receiptOf(T2, "denied") }),
      T2,
      [new ApprovalResolved({ ...approved, decision: "denied", note: null, executionRunId: null, receipt: receiptOf(T2, "denied") })]
    ],
    [
      "approved without an execution run id: recorded, nothing started",
      [...opened, parked],
      new ResolveApproval({ ...resolve, executionRunId: null }),
      T2,
      [new ApprovalResolved({ ...approved, executionRunId: null })]
    ],
    ["at the moment it expires", [...opened, parked], new ResolveApproval(resolve), EXPIRES, new ApprovalExpired({ approvalId })],
    ["after it expired", [...opened, parked], new ResolveApproval(resolve), LATE, new ApprovalExpired({ approvalId })],
    ["by another person", [...opened, parked], new ResolveApproval({ ...resolve, userId: dave }), T2, new ApprovalExpired({ approvalId })],
    ["a second time", [...opened, parked, approved, executionStarted], new ResolveApproval(resolve), T2, new ApprovalExpired({ approvalId })],
    ["an unknown approval", opened, new ResolveApproval(resolve), T2, new ApprovalExpired({ approvalId })],
    ["in a conversation that does not exist", [], new ResolveApproval(resolve), T2, new ApprovalExpired({ approvalId })],
    // a receipt records the decision as it is recorded, or the decision is not recorded
    ["with a receipt signed for another time", [...opened, parked], new ResolveApproval(resolve), T3, new ReceiptMismatch({ approvalId })],
    ["with a receipt saying denied for an approval", [...opened, parked], new ResolveApproval({ ...resolve, receipt: receiptOf(T2, "denied") }), T2, new ReceiptMismatch({ approvalId })],
    ["with a receipt naming another asker", [...opened, parked], new ResolveApproval({ ...resolve, receipt: { ...receiptOf(T2), askedBy: dave } }), T2, new ReceiptMismatch({ approvalId })],
    ["with a receipt naming another capability", [...opened, parked], new ResolveApproval({ ...resolve, receipt: { ...receiptOf(T2), capability: "nodes.create" } }), T2, new ReceiptMismatch({ approvalId })],
    ["with a receipt naming another workspace", [...opened, parked], new ResolveApproval({ ...resolve, receipt: { ...receiptOf(T2), workspaceId: "wsp_2" } }), T2, new ReceiptMismatch({ approvalId })]
  ]))

describe("questions", () => {
  const answer = new AnswerQuestion({ questionId: "qst_1", userId: carol, answer: "main" })
  const answered = new QuestionAnswered({ conversationId, questionId: "qst_1", answer: "main", answeredAt: T2, asked: askedAsStored })
  const timedOut = new QuestionClosed({ conversationId, questionId: "qst_1", reason: "timeout", closedAt: DEADLINE, asked: askedAsStored })
  const timeout = new CloseQuestion({ questionId: "qst_1", reason: "timeout" })
  const notFound = new QuestionNotFound({ questionId: "qst_1" })
  run([
    ["asked by a running run", opened, new AskQuestion(question), T1, [asked]],
    ["asked by a run that ended", [...opened, finished], new AskQuestion(question), T3, new RunNotFound({ runId: "tse_1" })],
    ["asked in a conversation that does not exist", [], new AskQuestion(question), T1, new RunNotFound({ runId: "tse_1" })],
    ["answered by the asking person while waiting", [...opened, asked], answer, T2, [answered]],
    ["answered by another person", [...opened, asked], new AnswerQuestion({ questionId: "qst_1", userId: dave, answer: "main" }), T2, notFound],
    ["answered twice", [...opened, asked, answered], answer, T2, notFound],
    ["answered after it closed", [...opened, asked, timedOut], answer, DEADLINE, notFound],
    ["an unknown question answered", opened, answer, T2, notFound],
    ["answered in a conversation that does not exist", [], answer, T2, notFound],
    ["closed at its deadline while waiting", [...opened, asked], timeout, DEADLINE, [timedOut]],
    ["closed after the answer won the race: nothing", [...opened, asked, answered], timeout, DEADLINE, []],
    ["an unknown question closed: nothing", opened, timeout, DEADLINE, []],
    ["closed in a conversation that does not exist: nothing", [], timeout, DEADLINE, []]
  ])
})

describe("stopping a turn", () => {
  const stop = new RequestStop({ turnId: "turn-1", userId: carol })
  const stopRequested = new RunStopRequested({ conversationId, runId: "tse_1", requestedAt: T2 })
  const notFound = new TurnNotFound({ turnId: "turn-1" })
  run([
    ["the person's running turn with that turn id", opened, stop, T2, [stopRequested]],
    ["twice: one request", [...opened, stopRequested], stop, T2, []],
    ["by another person", opened, new RequestStop({ turnId: "turn-1", userId: dave }), T2, notFound],
    ["an unknown turn id", opened, new RequestStop({ turnId: "turn-9", userId: carol }), T2, new TurnNotFound({ turnId: "turn-9" })],
    ["a turn that ended", [...opened, finished], stop, T3, notFound],
    ["in a conversation that does not exist", [], stop, T2, notFound]
  ])
})

describe("finishing a run", () => {
  const otherRun = new RunStarted({ ...runStarted, runId: "tse_2", turnId: "turn-2", startedAt: T1 })
  const otherAsked = new QuestionAsked({ ...asked, runId: "tse_2", questionId: "qst_2" })
  const stopRequested = new RunStopRequested({ conversationId, runId: "tse_1", requestedAt: T2 })
  const failure = { code: "bad_gateway", reason: "model_unavailable", message: "the model did not answer" }
  const lastChunk = [
    { seq: 7, event: { type: "text", text: "done" } },
    { seq: 8, event: { type: "usage", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } } }
  ] as const
  run([
    [
      "saves the reply, closes the run's waiting questions with ended, and ends it",
      [...opened, otherRun, asked, otherAsked],
      new FinishRun(finishing),
      T3,
      [assistantSaved, new QuestionClosed({ conversationId, questionId: "qst_1", reason: "ended", closedAt: T3, asked: askedAsStored }), finished]
    ],
    [
      "stopped after a stop request, with the partial reply",
      [...opened, stopRequested],
      new FinishRun({ ...finishing, status: "stopped" }),
      T3,
      [assistantSaved, new RunFinished({ ...finished, status: "stopped", run: { ...openRun, stopRequested: true } })]
    ],
    [
      "failed: no message, no result",
      opened,
      new FinishRun({ ...finishing, status: "failed", assistantMessageId: null, reply: "", result: null, error: failure }),
      T3,
      [new RunFinished({ ...finished, status: "failed", assistantMessageId: null, reply: "", result: null, error: failure })]
    ],
    [
      "with the stream's last chunk: the chunk first, at the end's time, then the reply and the end",
      opened,
      new FinishRun({ ...finishing, streamed: lastChunk }),
      T3,
      [new RunStreamed({ conversationId, runId: "tse_1", events: lastChunk, recordedAt: T3 }), assistantSaved, finished]
    ],
    [
      "with its tape: the tape after the last chunk, before the reply and the end",
      opened,
      new FinishRun({ ...finishing, streamed: lastChunk, tape: { version: 1, clock: [1] } }),
      T3,
      [
        new RunStreamed({ conversationId, runId: "tse_1", events: lastChunk, recordedAt: T3 }),
        new RunTaped({ conversationId, runId: "tse_1", tape: { version: 1, clock: [1] }, tapedAt: T3 }),
        assistantSaved,
        finished
      ]
    ],
    ["a run that already ended: nothing", [...opened, finished], new FinishRun(finishing), T3, []],
    ["a run that already ended, with a tape: nothing, the tape neither", [...opened, finished], new FinishRun({ ...finishing, tape: { version: 1 } }), T3, []],
    ["a run that already ended, with a last chunk: nothing, the chunk neither", [...opened, finished], new FinishRun({ ...finishing, streamed: lastChunk }), T3, []],
    ["an unknown run: nothing", opened, new FinishRun({ ...finishing, runId: "tse_9" }), T3, []],
    ["in a conversation that does not exist: nothing", [], new FinishRun(finishing), T3, []]
  ])
})

describe("recording a turn's stream", () => {
  const chunk = {
    runId: "tse_1",
    events: [
      { seq: 1, event: { type: "run", runId: "tse_1" } },
      { seq: 2, event: { type: "text", text: "plan" } }
    ]
  } as const
  const streamed = new RunStreamed({ conversationId, ...chunk, recordedAt: T1 })
  run([
    ["a chunk of a running run, as sent, at the command's time", opened, new RecordStream(chunk), T1, [streamed]],
    ["the next chunk of the same run", [...opened, streamed], new RecordStream({ runId: "tse_1", events: [{ seq: 3, event: { type: "text", text: " it" } }] }), T2, [
      new RunStreamed({ conversationId, runId: "tse_1", events: [{ seq: 3, event: { type: "text", text: " it" } }], recordedAt: T2 })
    ]],
    ["after the run ended: refused", [...opened, finished], new RecordStream(chunk), T3, new RunNotFound({ runId: "tse_1" })],
    ["an unknown run: refused", opened, new RecordStream({ ...chunk, runId: "tse_9" }), T1, new RunNotFound({ runId: "tse_9" })],
    ["in a conversation that does not exist: refused", [], new RecordStream(chunk), T1, new RunNotFound({ runId: "tse_1" })]
  ])

  it("leaves the state as it was", () => {
    const state = opened.reduce(ConversationActor.evolve, ConversationActor.initialState)
    expect(ConversationActor.evolve(state, streamed)).toEqual(state)
    // nor does a tape, which no read model holds either
    const taped = new RunTaped({ conversationId, runId: "tse_1", tape: { version: 1 }, tapedAt: T3 })
    expect(ConversationActor.evolve(state, taped)).toEqual(state)
    expect(ConversationActor.project(state, taped, { key: `conversation:${conversationId}`, seq: 9, at: T3, actor: "usr_1", commandId: "c" })).toEqual([])
  })

  it("projects each chunk as one row, with the seq of its first and last event", () =>
    expect(projectedRows(ConversationActor, keyOf(ConversationActor, conversationId), [...opened, streamed].map((e) => [e, T0] as const)).run_stream_chunks).toEqual([
      { run_id: "tse_1", conversation_id: conversationId, first_seq: 1, last_seq: 2, events: chunk.events, recorded_at: T1 }
    ]))
})

describe("summary", () =>
  run([
    [
      "rewritten at the command's time",
      opened,
      new RewriteSummary({ summary: "carol plans a release", coversMessages: 1, atTurn: 1 }),
      T2,
      [new SummaryRewritten({ conversationId, summary: "carol plans a release", coversMessages: 1, atTurn: 1, rewrittenAt: T2 })]
    ],
    ["of a conversation that does not exist: nothing", [], new RewriteSummary({ summary: "x", coversMessages: 1, atTurn: 1 }), T2, []],
    [
      "five turns after the last rewrite: rewritten",
      [...opened, new SummaryRewritten({ conversationId, summary: "first", coversMessages: 1, atTurn: 25, rewrittenAt: T1 })],
      new RewriteSummary({ summary: "second", coversMessages: 6, atTurn: 30 }),
      T2,
      [new SummaryRewritten({ conversationId, summary: "second", coversMessages: 6, atTurn: 30, rewrittenAt: T2 })]
    ],
    [
      "fewer than five turns after it (a rewrite decided from read models that had not seen the last): nothing",
      [...opened, new SummaryRewritten({ conversationId, summary: "first", coversMessages: 1, atTurn: 35, rewrittenAt: T1 })],
      new RewriteSummary({ summary: "late", coversMessages: 11, atTurn: 36 }),
      T2,
      []
    ],
    [
      "an older turn than the last rewrite's: nothing",
      [...opened, new SummaryRewritten({ conversationId, summary: "first", coversMessages: 1, atTurn: 36, rewrittenAt: T1 })],
      new RewriteSummary({ summary: "older", coversMessages: 10, atTurn: 35 }),
      T2,
      []
    ]
  ]))

describe("run edits (run.update)", () => {
  const edited = new RunUpdated({ conversationId, runId: "tse_1", title: "Release plan", tags: ["release"], pinned: false, updatedAt: T1 })
  run([
    [
      "the fields given change; the others keep their defaults; tags once each",
      [...opened, finished],
      new UpdateRun({ runId: "tse_1", userId: carol, title: "Release plan", tags: ["release", "release"] }),
      T1,
      [edited]
    ],
    [
      "a later edit keeps what it does not name",
      [...opened, finished, edited],
      new UpdateRun({ runId: "tse_1", userId: carol, pinned: true }),
      T2,
      [new RunUpdated({ conversationId, runId: "tse_1", title: "Release plan", tags: ["release"], pinned: true, updatedAt: T2 })]
    ],
    ["a title cleared with null", [...opened, edited], new UpdateRun({ runId: "tse_1", userId: carol, title: null }), T2, [
      new RunUpdated({ conversationId, runId: "tse_1", title: null, tags: ["release"], pinned: false, updatedAt: T2 })
    ]],
    ["an edit that changes nothing: nothing", [...opened, edited], new UpdateRun({ runId: "tse_1", userId: carol, title: "Release plan" }), T2, []],
    ["another person's run: not found", opened, new UpdateRun({ runId: "tse_1", userId: dave, pinned: true }), T1, new RunNotFound({ runId: "tse_1" })],
    ["in a conversation that does not exist: not found", [], new UpdateRun({ runId: "tse_1", userId: carol, pinned: true }), T1, new RunNotFound({ runId: "tse_1" })]
  ])

  it("projects the run's edits as one row", () =>
    expect(projectedRows(ConversationActor, keyOf(ConversationActor, conversationId), [...opened, edited].map((e) => [e, T0] as const)).run_edits).toEqual([
      { run_id: "tse_1", conversation_id: conversationId, title: "Release plan", tags: ["release"], pinned: false, updated_at: T1 }
    ]))
})

describe("evolve", () => {
  it("refuses a log that starts a conversation twice, or speaks of one never started", () => {
    const state = opened.reduce(ConversationActor.evolve, ConversationActor.initialState)
    expect(() => ConversationActor.evolve(state, started)).toThrow(/conversation.started/)
    expect(() => ConversationActor.evolve(ConversationActor.initialState, userSaved)).toThrow(/never started/)
    expect(() => ConversationActor.evolve(state, new RunStopRequested({ conversationId, runId: "tse_9", requestedAt: T2 }))).toThrow(/not running/)
  })

  it("keeps only what is open, and counts messages and turns", () => {
    const state = [...opened, parked, asked, approved, executionStarted, assistantSaved, finished].reduce(ConversationActor.evolve, ConversationActor.initialState)
    expect(state).toMatchObject({ messageCount: 2, turnCount: 1, approvals: {}, questions: { qst_1: askedAsStored }, runs: { tse_x: { kind: "approval" } } })
  })

  it.effect("every state survives the trip through JSON (the actor_state read model)", () =>
    Effect.gen(function* () {
      const histories: ReadonlyArray<ReadonlyArray<ConversationEvent>> = [
        [],
        opened,
        [...opened, parked, asked, new RunStopRequested({ conversationId, runId: "tse_1", requestedAt: T2 })],
        [...opened, parked, approved, executionStarted, new SummaryRewritten({ conversationId, summary: "s", coversMessages: 1, atTurn: 1, rewrittenAt: T2 })]
      ]
      for (const history of histories) {
        const state = history.reduce(ConversationActor.evolve, ConversationActor.initialState)
        expect(yield* jsonRoundTrip(ConversationState, state)).toEqual(state)
      }
    })
  )
})

describe("projection", () => {
  const key = keyOf(ConversationActor, conversationId)
  const header = { conversation_id: conversationId, org_id: "org_1", workspace_id: "wsp_1" }
  const conversationRow = {
    ...header,
    public_id: publicId,
    created_by: carol,
    created_at: T0,
    message_count: 1,
    turn_count: 1,
    summary: null,
    summary_covers_messages: null,
    summary_at_turn: null,
    summary_rewritten_at: null
  }
  const messageRow = { message_id: "msg_u1", conversation_id: conversationId, run_id: "tse_1", role: "user", content: "plan the release", attachments: ["gen_a"], position: 1, created_at: T0 }
  const runRow = {
    run_id: "tse_1",
    ...header,
    kind: "turn",
    turn_id: "turn-1",
    user_id: carol,
    api_key_id: null,
    approval_id: null,
    model: "offline",
    tier: "balanced",
    effort: "low",
    carried_summary: false,
    status: "running",
    stop_requested: false,
    assistant_message_id: null,
    reply: null,
    result: null,
    usage: null,
    error: null,
    node_id: "node-a",
    started_at: T0,
    ended_at: null
  }
  const approvalRow = {
    approval_id: approvalId,
    public_id: call.publicId,
    ...header,
    run_id: "tse_1",
    tool_call_id: "call_1",
    capability: "nodes.delete",
    input: { nodeId: "n1" },
    input_preview: "delete node n1",
    user_id: carol,
    status: "parked",
    expires_at: EXPIRES,
    parked_at: T1,
    note: null,
    resolved_by: null,
    resolved_at: null,
    execution_run_id: null,
    receipt: null
  }
  const questionRow = {
    question_id: "qst_1",
    ...header,
    run_id: "tse_1",
    user_id: carol,
    question: "which branch?",
    options: ["main", "next"],
    status: "waiting",
    answer: null,
    reason: null,
    deadline: DEADLINE,
    asked_at: T1,
    ended_at: null
  }
  const rows = (history: ReadonlyArray<ConversationEvent>) => projectedRows(ConversationActor, key, history.map((e) => [e, T0] as const))

  it("a turn starts: the conversation, the user's message at position 1, the running run", () =>
    expect(rows(opened)).toEqual({ conversations: [conversationRow], messages: [messageRow], runs: [runRow] }))

  it("a turn asks, parks, is asked to stop: the open question and approval, the stop request", () =>
    expect(rows([...opened, asked, parked, new RunStopRequested({ conversationId, runId: "tse_1", requestedAt: T2 })])).toEqual({
      conversations: [conversationRow],
      messages: [messageRow],
      runs: [{ ...runRow, stop_requested: true }],
      questions: [questionRow],
      approvals: [approvalRow]
    }))

  it("a turn finishes: the reply at position 2, its question closed as ended, the run's final row", () =>
    expect(
      rows([...opened, asked, assistantSaved, new QuestionClosed({ conversationId, questionId: "qst_1", reason: "ended", closedAt: T3, asked: askedAsStored }), finished])
    ).toEqual({
      conversations: [{ ...conversationRow, message_count: 2 }],
      messages: [
        { ...messageRow, message_id: "msg_a1", role: "assistant", content: "done", attachments: [], position: 2, created_at: T3 },
        messageRow
      ],
      runs: [{ ...runRow, status: "finished", assistant_message_id: "msg_a1", reply: "done", result, usage, ended_at: T3 }],
      questions: [{ ...questionRow, status: "closed", reason: "ended", ended_at: T3 }]
    }))

  it("a failed run records its error", () => {
    const error = { code: null, reason: "model_unavailable", message: "no model" }
    expect(rows([...opened, new RunFinished({ ...finished, status: "failed", assistantMessageId: null, reply: "", result: null, error })]).runs).toEqual([
      { ...runRow, status: "failed", reply: "", usage, error, ended_at: T3 }
    ])
  })

  it("an approval: its final row, and the execution run (not a turn)", () =>
    expect(rows([...opened, parked, approved, executionStarted])).toEqual({
      conversations: [conversationRow],
      messages: [messageRow],
      runs: [
        runRow,
        { ...runRow, run_id: "tse_x", kind: "approval", turn_id: null, approval_id: approvalId, tier: null, effort: null, node_id: null, started_at: T2 }
      ],
      approvals: [{ ...approvalRow, status: "approved", note: "go ahead", resolved_by: carol, resolved_at: T2, execution_run_id: "tse_x", receipt: receiptOf(T2) }]
    }))

  it("a denial", () =>
    expect(rows([...opened, parked, new ApprovalResolved({ ...approved, decision: "denied", note: null, executionRunId: null, receipt: receiptOf(T2, "denied") })]).approvals).toEqual([
      { ...approvalRow, status: "denied", resolved_by: carol, resolved_at: T2, receipt: receiptOf(T2, "denied") }
    ]))

  it("a decision recorded before receipts has none", () =>
    expect(rows([...opened, parked, new ApprovalResolved({ ...approved, receipt: null })]).approvals).toEqual([
      { ...approvalRow, status: "approved", note: "go ahead", resolved_by: carol, resolved_at: T2, execution_run_id: "tse_x" }
    ]))

  it("a tool input that is a bare JSON string goes to jsonb as its JSON text", () =>
    expect(rows([...opened, new ToolCallParked({ ...parked, input: "n1" })]).approvals).toEqual([{ ...approvalRow, input: '"n1"' }]))

  it("answered and timed-out questions", () => {
    const second = new QuestionAsked({ ...asked, questionId: "qst_2" })
    expect(
      rows([
        ...opened,
        asked,
        second,
        new QuestionAnswered({ conversationId, questionId: "qst_1", answer: "main", answeredAt: T2, asked: askedAsStored }),
        new QuestionClosed({ conversationId, questionId: "qst_2", reason: "timeout", closedAt: DEADLINE, asked: askedAsStored })
      ]).questions
    ).toEqual([
      { ...questionRow, status: "answered", answer: "main", ended_at: T2 },
      { ...questionRow, question_id: "qst_2", status: "closed", reason: "timeout", ended_at: DEADLINE }
    ])
  })

  it("a rewritten summary goes on the conversation", () =>
    expect(rows([...opened, new SummaryRewritten({ conversationId, summary: "carol plans a release", coversMessages: 1, atTurn: 1, rewrittenAt: T2 })]).conversations).toEqual([
      { ...conversationRow, summary: "carol plans a release", summary_covers_messages: 1, summary_at_turn: 1, summary_rewritten_at: T2 }
    ]))
})
