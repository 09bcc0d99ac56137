/** Rejections of the conversation actor, stated through the gateway's error table. The answer and
 * cancel capabilities turn `QuestionNotFound` and `TurnNotFound` into `{ found: false }`. */
import { Schema } from "effect"

/** No such conversation, or one of another workspace. */
export class ConversationNotFound extends Schema.TaggedError<ConversationNotFound>()("ConversationNotFound", {
  conversationId: Schema.String
}) {
  override get message() {
    return `no conversation ${this.conversationId} in this workspace`
  }
}

/** Not running: never started, or already ended. */
export class RunNotFound extends Schema.TaggedError<RunNotFound>()("RunNotFound", {
  runId: Schema.String
}) {
  override get message() {
    return `no running run ${this.runId}`
  }
}

/** Expired, already resolved, unknown, or parked for another person: the spec states all as one. */
export class ApprovalExpired extends Schema.TaggedError<ApprovalExpired>()("ApprovalExpired", {
  approvalId: Schema.String
}) {
  override get message() {
    return `approval ${this.approvalId} has expired, was already answered, or is not yours`
  }
}

/** Not waiting (unknown, answered or closed), or asked of another person. */
export class QuestionNotFound extends Schema.TaggedError<QuestionNotFound>()("QuestionNotFound", {
  questionId: Schema.String
}) {
  override get message() {
    return `no open question ${this.questionId} for you`
  }
}

/** No running turn of the person with this turn id. */
export class TurnNotFound extends Schema.TaggedError<TurnNotFound>()("TurnNotFound", {
  turnId: Schema.String
}) {
  override get message() {
    return `no running turn ${this.turnId} of yours`
  }
}

/** A turn of this conversation with the same turn id is still running: a cancel could not tell them apart. */
export class TurnIdInUse extends Schema.TaggedError<TurnIdInUse>()("TurnIdInUse", {
  turnId: Schema.String
}) {
  override get message() {
    return `a turn with id ${this.turnId} is still running in this conversation`
  }
}

/** A signed receipt that does not describe the decision it came with: a fault of the shell that signed it, never recorded. */
export class ReceiptMismatch extends Schema.TaggedError<ReceiptMismatch>()("ReceiptMismatch", {
  approvalId: Schema.String
}) {
  override get message() {
    return `the receipt signed for approval ${this.approvalId} does not describe its decision`
  }
}

export const ConversationError = Schema.Union(ConversationNotFound, RunNotFound, ApprovalExpired, QuestionNotFound, TurnNotFound, TurnIdInUse, ReceiptMismatch)
export type ConversationError = typeof ConversationError.Type
