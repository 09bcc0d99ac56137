/** A conversation is absent until its first turn; then it keeps its header, its counts, its
 * summary, and only what is still open: running runs, parked tool calls and waiting questions
 * (each by id), which are what later decisions and the final rows of those items need. */
import { Schema } from "effect"
import { AskedQuestion, OpenRun, ParkedCall, RunEdits } from "./events.ts"

export const Summary = Schema.Struct({
  text: Schema.String,
  coversMessages: Schema.NonNegativeInt,
  atTurn: Schema.NonNegativeInt,
  rewrittenAt: Schema.String
})

/** Spec 8: the summary of older messages is rewritten about once every five turns. */
export const SUMMARY_EVERY_TURNS = 5

/** Whether a summary written at turn `atTurn` is due after the one held (none: it is). */
export const summaryDue = (held: { readonly atTurn: number } | null, atTurn: number): boolean =>
  held === null || atTurn - held.atTurn >= SUMMARY_EVERY_TURNS

export const ActiveConversation = Schema.TaggedStruct("Active", {
  conversationId: Schema.NonEmptyString,
  publicId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  createdBy: Schema.NonEmptyString,
  createdAt: Schema.String,
  /** Messages saved; a message's position is this count once it is saved (1-based). */
  messageCount: Schema.NonNegativeInt,
  /** Turn runs started (approval runs are not turns). */
  turnCount: Schema.NonNegativeInt,
  summary: Schema.NullOr(Summary),
  /** runId -> running run */
  runs: Schema.Record({ key: Schema.String, value: OpenRun }),
  /** approvalId -> parked call */
  approvals: Schema.Record({ key: Schema.String, value: ParkedCall }),
  /** questionId -> waiting question */
  questions: Schema.Record({ key: Schema.String, value: AskedQuestion }),
  /** runId -> its edits, for runs edited at least once (a state of an earlier build has none) */
  runEdits: Schema.optionalWith(Schema.Record({ key: Schema.String, value: RunEdits }), { default: () => ({}) })
})
export type ActiveConversation = typeof ActiveConversation.Type

export const ConversationState = Schema.Union(Schema.TaggedStruct("Absent", {}), ActiveConversation)
export type ConversationState = typeof ConversationState.Type

/** A run never edited: no title, no tags, not pinned. */
export const uneditedRun: RunEdits = { title: null, tags: [], pinned: false }

export const initialConversationState: ConversationState = { _tag: "Absent" }
