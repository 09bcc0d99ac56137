/**
 * Events of the conversation actor (key `conversation:<conversationId>`): a conversation, its
 * messages, and its runs, parked tool calls and questions while they are open. Each event repeats
 * the command's time, because `evolve` sees only the event. An event that ends a run, an approval
 * or a question carries that item as it stood (`run`, `parked`, `asked`): the item leaves the
 * state, and the projection writes its final row from the event. A published `_tag` is never renamed.
 */
import { Schema } from "effect"
import { Json } from "../kernel.ts"

export const MessageRole = Schema.Literal("user", "assistant")
export const RunKind = Schema.Literal("turn", "approval")
export const RunEnd = Schema.Literal("finished", "failed", "stopped")
export const Decision = Schema.Literal("approved", "denied")
export const CloseReason = Schema.Literal("timeout", "ended")

export const Usage = Schema.Struct({
  promptTokens: Schema.NonNegativeInt,
  completionTokens: Schema.NonNegativeInt,
  totalTokens: Schema.NonNegativeInt
})

export const RunError = Schema.Struct({
  code: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String),
  message: Schema.String
})

const conversationId = Schema.NonEmptyString

/** A run as it starts. */
const runStart = {
  /** The caller's turn id (the cancel route's handle); null for an approval run or when none was sent. */
  turnId: Schema.NullOr(Schema.NonEmptyString),
  kind: RunKind,
  /** The asking person. */
  userId: Schema.NonEmptyString,
  apiKeyId: Schema.NullOr(Schema.NonEmptyString),
  model: Schema.String,
  tier: Schema.NullOr(Schema.String),
  effort: Schema.NullOr(Schema.String),
  /** Whether the model was sent the conversation's summary. */
  carriedSummary: Schema.Boolean,
  /** Set for an approval run: the approval whose call it executes. */
  approvalId: Schema.NullOr(Schema.NonEmptyString),
  /** The node running it (`NODE_ID`); null in runs recorded before runs named their node. */
  node: Schema.optionalWith(Schema.NullOr(Schema.NonEmptyString), { default: () => null, exact: true }),
  startedAt: Schema.String
}

/** A running run, as the state keeps it and `run.finished` repeats it. */
export const OpenRun = Schema.Struct({ ...runStart, stopRequested: Schema.Boolean })
export type OpenRun = typeof OpenRun.Type

const parkedCall = {
  runId: Schema.NonEmptyString,
  /** `apr_<32 hex>`. */
  publicId: Schema.NonEmptyString,
  /** The model's id for the call. */
  toolCallId: Schema.NonEmptyString,
  capability: Schema.NonEmptyString,
  input: Json,
  inputPreview: Schema.String,
  /** The asking person: the only one who may resolve it. */
  userId: Schema.NonEmptyString,
  /** ISO 8601: resolving is refused from this time on. */
  expiresAt: Schema.String,
  parkedAt: Schema.String
}

/** A tool call waiting for approval, as the state keeps it and `approval.resolved` repeats it. */
export const ParkedCall = Schema.Struct(parkedCall)
export type ParkedCall = typeof ParkedCall.Type

const askedQuestion = {
  runId: Schema.NonEmptyString,
  question: Schema.String,
  options: Schema.Array(Schema.String),
  /** The asking person: the only one who may answer. */
  userId: Schema.NonEmptyString,
  /** ISO 8601: a sweeper closes the question with `timeout` after it. */
  deadline: Schema.String,
  askedAt: Schema.String
}

/** An approver's decision on a parked call: the command and the event that record it share this list. */
export const approvalDecision = {
  approvalId: Schema.NonEmptyString,
  decision: Decision,
  note: Schema.NullOr(Schema.String),
  userId: Schema.NonEmptyString,
  /** The run that executes the call; null when denied. */
  executionRunId: Schema.NullOr(Schema.NonEmptyString)
}

/**
 * What an approver's decision is signed as (docs/audit.md, "Approval receipts"): who asked, who
 * decided what and when, on which capability and input. The shell signs it with the node's audit
 * key, where the key is; the decider records it only if it describes the decision it records.
 */
export const ApprovalReceipt = Schema.Struct({
  version: Schema.Literal("svc-approval-receipt-v1"),
  /** `apr_<32 hex>`. */
  approvalId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  capability: Schema.NonEmptyString,
  /** SHA-256 (lowercase hex) of the canonical JSON of the call's input. */
  inputSha256: Schema.String,
  /** The person who asked the turn that parked the call. */
  askedBy: Schema.NonEmptyString,
  /** The person who approved or denied it. */
  decidedBy: Schema.NonEmptyString,
  decision: Decision,
  /** ISO 8601: the decision's time, the event's `resolvedAt`. */
  decidedAt: Schema.String,
  /** The signing key's id (as for signed checkpoints). */
  keyId: Schema.String,
  /** Ed25519 (base64url) over the canonical JSON of every other member. */
  signature: Schema.String
})
export type ApprovalReceipt = typeof ApprovalReceipt.Type

/** How a run ended: the command ending it and its event share this list. */
export const runEnding = {
  status: RunEnd,
  assistantMessageId: Schema.NullOr(Schema.NonEmptyString),
  /** The whole reply; on a stopped run, what was written before the stop. */
  reply: Schema.String,
  /** The turn result (spec 2.3); null on failure. */
  result: Json,
  usage: Usage,
  error: Schema.NullOr(RunError)
}

/** A rewritten summary: the command and its event share this list. */
export const rewrittenSummary = {
  summary: Schema.String,
  /** How many of the oldest messages it stands for. */
  coversMessages: Schema.NonNegativeInt,
  /** The turn count when it was written. */
  atTurn: Schema.NonNegativeInt
}

/** A waiting question, as the state keeps it and its ending event repeats it. */
export const AskedQuestion = Schema.Struct(askedQuestion)
export type AskedQuestion = typeof AskedQuestion.Type

export class ConversationStarted extends Schema.TaggedClass<ConversationStarted>()("conversation.started", {
  conversationId,
  /** `cnv_<32 hex>`. */
  publicId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  /** The person who started it. */
  userId: Schema.NonEmptyString,
  startedAt: Schema.String
}) {}

export class MessageSaved extends Schema.TaggedClass<MessageSaved>()("message.saved", {
  conversationId,
  messageId: Schema.NonEmptyString,
  runId: Schema.NonEmptyString,
  role: MessageRole,
  content: Schema.String,
  /** `gen_` file ids. */
  attachments: Schema.Array(Schema.String),
  savedAt: Schema.String
}) {}

export class RunStarted extends Schema.TaggedClass<RunStarted>()("run.started", {
  conversationId,
  runId: Schema.NonEmptyString,
  ...runStart
}) {}

export class ToolCallParked extends Schema.TaggedClass<ToolCallParked>()("tool_call.parked", {
  conversationId,
  /** A UUID. */
  approvalId: Schema.NonEmptyString,
  ...parkedCall
}) {}

export class ApprovalResolved extends Schema.TaggedClass<ApprovalResolved>()("approval.resolved", {
  conversationId,
  /** The conversation's organization, so that the audit export carries the decision; null in events recorded before receipts. */
  orgId: Schema.optionalWith(Schema.NullOr(Schema.NonEmptyString), { default: () => null, exact: true }),
  ...approvalDecision,
  resolvedAt: Schema.String,
  parked: ParkedCall,
  /** Null in events recorded before receipts. */
  receipt: Schema.optionalWith(Schema.NullOr(ApprovalReceipt), { default: () => null, exact: true })
}) {}

export class QuestionAsked extends Schema.TaggedClass<QuestionAsked>()("question.asked", {
  conversationId,
  questionId: Schema.NonEmptyString,
  ...askedQuestion
}) {}

export class QuestionAnswered extends Schema.TaggedClass<QuestionAnswered>()("question.answered", {
  conversationId,
  questionId: Schema.NonEmptyString,
  answer: Schema.String,
  answeredAt: Schema.String,
  asked: AskedQuestion
}) {}

export class QuestionClosed extends Schema.TaggedClass<QuestionClosed>()("question.closed", {
  conversationId,
  questionId: Schema.NonEmptyString,
  reason: CloseReason,
  closedAt: Schema.String,
  asked: AskedQuestion
}) {}

export class RunStopRequested extends Schema.TaggedClass<RunStopRequested>()("run.stop_requested", {
  conversationId,
  runId: Schema.NonEmptyString,
  requestedAt: Schema.String
}) {}

export class RunFinished extends Schema.TaggedClass<RunFinished>()("run.finished", {
  conversationId,
  runId: Schema.NonEmptyString,
  ...runEnding,
  endedAt: Schema.String,
  run: OpenRun
}) {}

/** One event of a turn's chat stream (spec 6.1) as the client was sent it, with its SSE `id:`. */
export const StreamedEvent = Schema.Struct({
  /** The event's place in the turn's stream: 1 for `run`, then one more per event. */
  seq: Schema.Int.pipe(Schema.positive()),
  /** The chat event as encoded on the wire. */
  event: Json
})
export type StreamedEvent = typeof StreamedEvent.Type

/** What a running turn streamed since its last chunk: the command and the event share this list. */
export const streamedChunk = {
  runId: Schema.NonEmptyString,
  /** In order, with consecutive `seq`s. */
  events: Schema.NonEmptyArray(StreamedEvent)
}

/**
 * A chunk of a running turn's chat stream: the events since the previous chunk, recorded every
 * quarter second or so, at each tool, approval and question boundary, and the rest before the run
 * ends, so that a client that lost its stream resumes it from any node (docs/chat.md).
 */
export class RunStreamed extends Schema.TaggedClass<RunStreamed>()("run.streamed", {
  conversationId,
  ...streamedChunk,
  recordedAt: Schema.String
}) {}

/**
 * A turn's tape (docs/audit.md, "The turn's tape"): every nondeterministic input the turn used (the
 * settings in force, what the model was sent, each model call's streamed output, each tool's
 * result, the clock readings), so that the turn can be re-run under other code with no model and
 * no tool called (`svc turn replay`). Recorded with the run's end, just before `run.finished`.
 */
export class RunTaped extends Schema.TaggedClass<RunTaped>()("run.taped", {
  conversationId,
  runId: Schema.NonEmptyString,
  /** The tape as src/assistant/TurnTape.ts writes it (`version` 1). */
  tape: Json,
  tapedAt: Schema.String
}) {}

export class SummaryRewritten extends Schema.TaggedClass<SummaryRewritten>()("summary.rewritten", {
  conversationId,
  ...rewrittenSummary,
  rewrittenAt: Schema.String
}) {}

/** What a person may edit of a run (spec 5.3's run edits): its title, tags and pin. */
export const RunEdits = Schema.Struct({
  title: Schema.NullOr(Schema.String),
  tags: Schema.Array(Schema.String),
  pinned: Schema.Boolean
})
export type RunEdits = typeof RunEdits.Type

/** A run's edits as they stand after the change (the whole set, not the difference). */
export class RunUpdated extends Schema.TaggedClass<RunUpdated>()("run.updated", {
  conversationId,
  runId: Schema.NonEmptyString,
  ...RunEdits.fields,
  updatedAt: Schema.String
}) {}

export const ConversationEvent = Schema.Union(
  ConversationStarted,
  MessageSaved,
  RunStarted,
  ToolCallParked,
  ApprovalResolved,
  QuestionAsked,
  QuestionAnswered,
  QuestionClosed,
  RunStopRequested,
  RunFinished,
  SummaryRewritten,
  RunStreamed,
  RunTaped,
  RunUpdated
)
export type ConversationEvent = typeof ConversationEvent.Type
