/** Commands of the conversation actor. The engine mints every id (conversation, run, message,
 * approval, question), resolves the model and checks who may act; time comes from the command's
 * metadata. */
import { Schema, Struct } from "effect"
import { Json } from "../kernel.ts"
import { approvalDecision, ApprovalReceipt, AskedQuestion, CloseReason, ParkedCall, rewrittenSummary, RunEdits, runEnding, streamedChunk, StreamedEvent } from "./events.ts"

/** The node that runs the run: a command from a node of an earlier build names none. */
const runNode = Schema.optionalWith(Schema.NullOr(Schema.NonEmptyString), { default: () => null, exact: true })

/** Saves the user's message and starts a turn run; creates the conversation when `create`. */
export class StartTurn extends Schema.TaggedClass<StartTurn>()("StartTurn", {
  conversationId: Schema.NonEmptyString,
  /** Start the conversation when it does not exist yet (a retry of a creating turn continues it). */
  create: Schema.Boolean,
  publicId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  userId: Schema.NonEmptyString,
  apiKeyId: Schema.NullOr(Schema.NonEmptyString),
  runId: Schema.NonEmptyString,
  turnId: Schema.NullOr(Schema.NonEmptyString),
  userMessageId: Schema.NonEmptyString,
  content: Schema.String,
  attachments: Schema.Array(Schema.String),
  model: Schema.String,
  tier: Schema.NullOr(Schema.String),
  effort: Schema.NullOr(Schema.String),
  carriedSummary: Schema.Boolean,
  node: runNode
}) {}

/** A tool call that needs approval: recorded instead of run. */
export class ParkToolCall extends Schema.TaggedClass<ParkToolCall>()("ParkToolCall", {
  approvalId: Schema.NonEmptyString,
  ...Struct.omit(ParkedCall.fields, "parkedAt")
}) {}

/** The asking person's decision; an approval starts the execution run `executionRunId` at once. */
export class ResolveApproval extends Schema.TaggedClass<ResolveApproval>()("ResolveApproval", {
  ...approvalDecision,
  /** The decision signed; refused unless it describes this decision. */
  receipt: ApprovalReceipt,
  /** The execution run's model. */
  model: Schema.String,
  /** The node that runs the execution run. */
  node: runNode
}) {}

export class AskQuestion extends Schema.TaggedClass<AskQuestion>()("AskQuestion", {
  questionId: Schema.NonEmptyString,
  ...Struct.omit(AskedQuestion.fields, "askedAt")
}) {}

export class AnswerQuestion extends Schema.TaggedClass<AnswerQuestion>()("AnswerQuestion", {
  questionId: Schema.NonEmptyString,
  userId: Schema.NonEmptyString,
  answer: Schema.String
}) {}

/** The deadline passed (`timeout`), or the run ended (`ended`). */
export class CloseQuestion extends Schema.TaggedClass<CloseQuestion>()("CloseQuestion", {
  questionId: Schema.NonEmptyString,
  reason: CloseReason
}) {}

/** The cancel route: the person's running turn with this turn id. */
export class RequestStop extends Schema.TaggedClass<RequestStop>()("RequestStop", {
  turnId: Schema.NonEmptyString,
  userId: Schema.NonEmptyString
}) {}

/** Ends a running run; saves the assistant message when `assistantMessageId` is set. */
export class FinishRun extends Schema.TaggedClass<FinishRun>()("FinishRun", {
  runId: Schema.NonEmptyString,
  ...runEnding,
  /** The turn's stream since its last chunk: its last chunk, recorded with its end. */
  streamed: Schema.optionalWith(Schema.Array(StreamedEvent), { default: () => [] }),
  /** The turn's tape (`run.taped`); null for a run that keeps none (an approval's execution). */
  tape: Schema.optionalWith(Schema.NullOr(Json), { default: () => null })
}) {}

/** Records a chunk of a running turn's chat stream. */
export class RecordStream extends Schema.TaggedClass<RecordStream>()("RecordStream", streamedChunk) {}

export class RewriteSummary extends Schema.TaggedClass<RewriteSummary>()("RewriteSummary", rewrittenSummary) {}

/** A person's edit of one of their runs: the fields given change, the others stay. */
export class UpdateRun extends Schema.TaggedClass<UpdateRun>()("UpdateRun", {
  runId: Schema.NonEmptyString,
  userId: Schema.NonEmptyString,
  title: Schema.optional(RunEdits.fields.title),
  tags: Schema.optional(RunEdits.fields.tags),
  pinned: Schema.optional(RunEdits.fields.pinned)
}) {}

export const ConversationCommand = Schema.Union(
  StartTurn,
  ParkToolCall,
  ResolveApproval,
  AskQuestion,
  AnswerQuestion,
  CloseQuestion,
  RequestStop,
  FinishRun,
  RewriteSummary,
  RecordStream,
  UpdateRun
)
export type ConversationCommand = typeof ConversationCommand.Type
