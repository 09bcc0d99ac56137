import type { ConversationEvent } from "./events.ts"
import type { ActiveConversation, ConversationState } from "./state.ts"

const without = <A>(record: Readonly<Record<string, A>>, id: string): Record<string, A> => {
  const { [id]: _, ...rest } = record
  return rest
}

// The decider emits every event but the first only for a started conversation, and a stop only for
// a running run; a log that says otherwise is corrupt.
export const evolve = (state: ConversationState, event: ConversationEvent): ConversationState => {
  if (event._tag === "conversation.started") {
    if (state._tag !== "Absent") throw new Error(`conversation.started for conversation ${event.conversationId}, which exists`)
    return {
      _tag: "Active",
      conversationId: event.conversationId,
      publicId: event.publicId,
      orgId: event.orgId,
      workspaceId: event.workspaceId,
      createdBy: event.userId,
      createdAt: event.startedAt,
      messageCount: 0,
      turnCount: 0,
      summary: null,
      runs: {},
      approvals: {},
      questions: {},
      runEdits: {}
    }
  }
  if (state._tag !== "Active") throw new Error(`${event._tag} for conversation ${event.conversationId}, which was never started`)
  return apply(state, event)
}

const apply = (state: ActiveConversation, event: Exclude<ConversationEvent, { readonly _tag: "conversation.started" }>): ActiveConversation => {
  switch (event._tag) {
    case "message.saved":
      return { ...state, messageCount: state.messageCount + 1 }
    case "run.started": {
      const { _tag, conversationId: _c, runId, ...run } = event
      return {
        ...state,
        turnCount: state.turnCount + (run.kind === "turn" ? 1 : 0),
        runs: { ...state.runs, [runId]: { ...run, stopRequested: false } }
      }
    }
    case "tool_call.parked": {
      const { _tag, conversationId: _c, approvalId, ...call } = event
      return { ...state, approvals: { ...state.approvals, [approvalId]: call } }
    }
    case "approval.resolved":
      return { ...state, approvals: without(state.approvals, event.approvalId) }
    case "question.asked": {
      const { _tag, conversationId: _c, questionId, ...asked } = event
      return { ...state, questions: { ...state.questions, [questionId]: asked } }
    }
    case "question.answered":
    case "question.closed":
      return { ...state, questions: without(state.questions, event.questionId) }
    case "run.stop_requested": {
      const run = state.runs[event.runId]
      if (run === undefined) throw new Error(`run.stop_requested for run ${event.runId}, which is not running`)
      return { ...state, runs: { ...state.runs, [event.runId]: { ...run, stopRequested: true } } }
    }
    case "run.finished":
      return { ...state, runs: without(state.runs, event.runId) }
    case "run.streamed":
    case "run.taped":
      // the stream is kept in its chunks' rows, the tape in the log alone: neither in the state
      return state
    case "run.updated": {
      const { title, tags, pinned } = event
      return { ...state, runEdits: { ...state.runEdits, [event.runId]: { title, tags, pinned } } }
    }
    case "summary.rewritten":
      return {
        ...state,
        summary: { text: event.summary, coversMessages: event.coversMessages, atTurn: event.atTurn, rewrittenAt: event.rewrittenAt }
      }
  }
}
