import { Array, Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { ApprovalExpired, ConversationNotFound, type ConversationError, QuestionNotFound, ReceiptMismatch, RunNotFound, TurnIdInUse, TurnNotFound } from "./errors.ts"
import {
  ApprovalResolved,
  ConversationStarted,
  type ConversationEvent,
  MessageSaved,
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
} from "./events.ts"
import type {
  AnswerQuestion,
  AskQuestion,
  CloseQuestion,
  ConversationCommand,
  FinishRun,
  ParkToolCall,
  RequestStop,
  ResolveApproval,
  StartTurn,
  UpdateRun
} from "./protocol.ts"
import { type ActiveConversation, type ConversationState, summaryDue, uneditedRun } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<ConversationEvent>, ConversationError>

const nothing: Decision = Either.right([])

export const decide = (state: ConversationState, command: ConversationCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "StartTurn":
      return startTurn(state, command, meta)
    case "ParkToolCall":
      return park(state, command, meta)
    case "ResolveApproval":
      return resolve(state, command, meta)
    case "AskQuestion":
      return ask(state, command, meta)
    case "AnswerQuestion":
      return answer(state, command, meta)
    case "CloseQuestion":
      return close(state, command, meta)
    case "RequestStop":
      return stop(state, command, meta)
    case "FinishRun":
      return finish(state, command, meta)
    case "RecordStream":
      // only a running run streams; a chunk after its end has no stream to join
      if (!running(state, command.runId)) return Either.left(new RunNotFound({ runId: command.runId }))
      return Either.right([new RunStreamed({ conversationId: state.conversationId, runId: command.runId, events: command.events, recordedAt: meta.at })])
    case "UpdateRun":
      return updateRun(state, command, meta)
    case "RewriteSummary":
      // only the engine rewrites, after loading the conversation: an absent one has nothing to
      // summarise. The engine decides from read models, which may not hold a rewrite still in
      // flight; the conversation itself keeps the rewrites five turns apart.
      if (state._tag === "Absent" || !summaryDue(state.summary, command.atTurn)) return nothing
      return Either.right([
        new SummaryRewritten({
          conversationId: state.conversationId,
          summary: command.summary,
          coversMessages: command.coversMessages,
          atTurn: command.atTurn,
          rewrittenAt: meta.at
        })
      ])
  }
}

const startTurn = (state: ConversationState, command: StartTurn, meta: CommandMeta): Decision => {
  const { conversationId, workspaceId, userId, runId } = command
  const absent = state._tag === "Absent"
  // another person's conversation is not there for this one: its history would reach their model
  if ((absent && !command.create) || (!absent && (state.workspaceId !== workspaceId || state.createdBy !== userId))) {
    return Either.left(new ConversationNotFound({ conversationId }))
  }
  if (!absent && command.turnId !== null && Object.values(state.runs).some((run) => run.kind === "turn" && run.turnId === command.turnId)) {
    return Either.left(new TurnIdInUse({ turnId: command.turnId }))
  }
  const started = absent
    ? [new ConversationStarted({ conversationId, publicId: command.publicId, orgId: command.orgId, workspaceId, userId, startedAt: meta.at })]
    : []
  return Either.right([
    ...started,
    new MessageSaved({
      conversationId,
      messageId: command.userMessageId,
      runId,
      role: "user",
      content: command.content,
      attachments: command.attachments,
      savedAt: meta.at
    }),
    new RunStarted({
      conversationId,
      runId,
      turnId: command.turnId,
      kind: "turn",
      userId,
      apiKeyId: command.apiKeyId,
      model: command.model,
      tier: command.tier,
      effort: command.effort,
      carriedSummary: command.carriedSummary,
      approvalId: null,
      node: command.node,
      startedAt: meta.at
    })
  ])
}

const running = (state: ConversationState, runId: string): state is ActiveConversation => state._tag === "Active" && runId in state.runs

const park = (state: ConversationState, command: ParkToolCall, meta: CommandMeta): Decision => {
  if (!running(state, command.runId)) return Either.left(new RunNotFound({ runId: command.runId }))
  const { _tag, ...call } = command
  return Either.right([new ToolCallParked({ conversationId: state.conversationId, ...call, parkedAt: meta.at })])
}

const resolve = (state: ConversationState, command: ResolveApproval, meta: CommandMeta): Decision => {
  const { approvalId, userId } = command
  const parked = state._tag === "Active" ? state.approvals[approvalId] : undefined
  if (state._tag === "Absent" || parked === undefined || Date.parse(meta.at) >= Date.parse(parked.expiresAt) || userId !== parked.userId) {
    return Either.left(new ApprovalExpired({ approvalId }))
  }
  const { conversationId, orgId, workspaceId } = state
  const { receipt } = command
  // every claim of the receipt but the input's hash, which the shell computed from the same parked input
  const describes = receipt.approvalId === parked.publicId && receipt.orgId === orgId && receipt.workspaceId === workspaceId &&
    receipt.capability === parked.capability && receipt.askedBy === parked.userId && receipt.decidedBy === userId &&
    receipt.decision === command.decision && receipt.decidedAt === meta.at
  if (!describes) return Either.left(new ReceiptMismatch({ approvalId }))
  const executionRunId = command.decision === "approved" ? command.executionRunId : null
  const resolved = new ApprovalResolved({
    conversationId,
    orgId,
    approvalId,
    decision: command.decision,
    note: command.note,
    userId,
    executionRunId,
    resolvedAt: meta.at,
    parked,
    receipt
  })
  if (executionRunId === null) return Either.right([resolved])
  return Either.right([
    resolved,
    new RunStarted({
      conversationId,
      runId: executionRunId,
      turnId: null,
      kind: "approval",
      userId,
      apiKeyId: null,
      model: command.model,
      tier: null,
      effort: null,
      carriedSummary: false,
      approvalId,
      node: command.node,
      startedAt: meta.at
    })
  ])
}

const ask = (state: ConversationState, command: AskQuestion, meta: CommandMeta): Decision => {
  if (!running(state, command.runId)) return Either.left(new RunNotFound({ runId: command.runId }))
  const { _tag, ...question } = command
  return Either.right([new QuestionAsked({ conversationId: state.conversationId, ...question, askedAt: meta.at })])
}

const answer = (state: ConversationState, command: AnswerQuestion, meta: CommandMeta): Decision => {
  const { questionId } = command
  const asked = state._tag === "Active" ? state.questions[questionId] : undefined
  if (state._tag === "Absent" || asked === undefined || asked.userId !== command.userId) {
    return Either.left(new QuestionNotFound({ questionId }))
  }
  return Either.right([new QuestionAnswered({ conversationId: state.conversationId, questionId, answer: command.answer, answeredAt: meta.at, asked })])
}

const close = (state: ConversationState, command: CloseQuestion, meta: CommandMeta): Decision => {
  const { questionId } = command
  const asked = state._tag === "Active" ? state.questions[questionId] : undefined
  // an answer may have come just before the timer: the question is no longer waiting, and that is fine
  if (state._tag === "Absent" || asked === undefined) return nothing
  return Either.right([new QuestionClosed({ conversationId: state.conversationId, questionId, reason: command.reason, closedAt: meta.at, asked })])
}

const stop = (state: ConversationState, command: RequestStop, meta: CommandMeta): Decision => {
  const { turnId, userId } = command
  const found = state._tag === "Active"
    ? Object.entries(state.runs).find(([, run]) => run.kind === "turn" && run.turnId === turnId && run.userId === userId)
    : undefined
  if (state._tag === "Absent" || found === undefined) return Either.left(new TurnNotFound({ turnId }))
  const [runId, run] = found
  if (run.stopRequested) return nothing
  return Either.right([new RunStopRequested({ conversationId: state.conversationId, runId, requestedAt: meta.at })])
}

const finish = (state: ConversationState, command: FinishRun, meta: CommandMeta): Decision => {
  const { runId, assistantMessageId } = command
  // a run ends once; a late or repeated report changes nothing
  if (!running(state, runId)) return nothing
  const { conversationId } = state
  // the stream's last chunk goes before the end, as its own event: a resumed stream reads chunks
  const lastChunk = Array.isNonEmptyReadonlyArray(command.streamed)
    ? [new RunStreamed({ conversationId, runId, events: command.streamed, recordedAt: meta.at })]
    : []
  const saved = assistantMessageId === null
    ? []
    : [new MessageSaved({ conversationId, messageId: assistantMessageId, runId, role: "assistant", content: command.reply, attachments: [], savedAt: meta.at })]
  const closed = Object.entries(state.questions)
    .filter(([, asked]) => asked.runId === runId)
    .map(([questionId, asked]) => new QuestionClosed({ conversationId, questionId, reason: "ended", closedAt: meta.at, asked }))
  const tape = command.tape === null ? [] : [new RunTaped({ conversationId, runId, tape: command.tape, tapedAt: meta.at })]
  return Either.right([
    ...lastChunk,
    ...tape,
    ...saved,
    ...closed,
    new RunFinished({
      conversationId,
      runId,
      status: command.status,
      assistantMessageId,
      reply: command.reply,
      result: command.result,
      usage: command.usage,
      error: command.error,
      endedAt: meta.at,
      run: state.runs[runId]
    })
  ])
}

/** Only the person whose conversation it is edits its runs (the engine found the run in it first). */
const updateRun = (state: ConversationState, command: UpdateRun, meta: CommandMeta): Decision => {
  if (state._tag === "Absent" || state.createdBy !== command.userId) return Either.left(new RunNotFound({ runId: command.runId }))
  const before = state.runEdits[command.runId] ?? uneditedRun
  const after = {
    title: command.title === undefined ? before.title : command.title,
    tags: command.tags === undefined ? before.tags : [...new Set(command.tags)],
    pinned: command.pinned ?? before.pinned
  }
  // an edit that changes nothing records nothing
  if (command.runId in state.runEdits && JSON.stringify(after) === JSON.stringify(before)) return nothing
  return Either.right([new RunUpdated({ conversationId: state.conversationId, runId: command.runId, ...after, updatedAt: meta.at })])
}
