/** Read models (migrations 0007, 0022, 0027, 0031): `conversations`, `messages`, `runs`, `approvals`, `questions`,
 * `run_stream_chunks` (each `run.streamed` as it was recorded) and `run_edits` (a run's title, tags and pin).
 * Every write is a full row: open items from the state after the event, ended ones from the
 * ending event, which carries the item as it stood. */
import type { EventContext, Json, RowOp } from "../kernel.ts"
import type { ApprovalResolved, AskedQuestion, ConversationEvent, OpenRun, ParkedCall, RunFinished } from "./events.ts"
import type { ActiveConversation, ConversationState } from "./state.ts"

const upsert = (table: string, pk: string, row: Readonly<Record<string, Json>>): RowOp => ({ op: "upsert", table, pk: [pk], row })

/** The projector sends a string as it is, so a JSON string for a jsonb column goes as its JSON text. */
const jsonb = (value: Json): Json => (typeof value === "string" ? JSON.stringify(value) : value)

const conversationRow = (c: ActiveConversation): RowOp =>
  upsert("conversations", "conversation_id", {
    conversation_id: c.conversationId,
    public_id: c.publicId,
    org_id: c.orgId,
    workspace_id: c.workspaceId,
    created_by: c.createdBy,
    created_at: c.createdAt,
    message_count: c.messageCount,
    turn_count: c.turnCount,
    summary: c.summary?.text ?? null,
    summary_covers_messages: c.summary?.coversMessages ?? null,
    summary_at_turn: c.summary?.atTurn ?? null,
    summary_rewritten_at: c.summary?.rewrittenAt ?? null
  })

const runRow = (c: ActiveConversation, runId: string, run: OpenRun, end: RunFinished | null): RowOp =>
  upsert("runs", "run_id", {
    run_id: runId,
    conversation_id: c.conversationId,
    org_id: c.orgId,
    workspace_id: c.workspaceId,
    kind: run.kind,
    turn_id: run.turnId,
    user_id: run.userId,
    api_key_id: run.apiKeyId,
    approval_id: run.approvalId,
    model: run.model,
    tier: run.tier,
    effort: run.effort,
    carried_summary: run.carriedSummary,
    status: end?.status ?? "running",
    stop_requested: run.stopRequested,
    assistant_message_id: end?.assistantMessageId ?? null,
    reply: end?.reply ?? null,
    result: end === null ? null : jsonb(end.result),
    usage: end?.usage ?? null,
    error: end?.error ?? null,
    node_id: run.node,
    started_at: run.startedAt,
    ended_at: end?.endedAt ?? null
  })

const approvalRow = (
  c: ActiveConversation,
  approvalId: string,
  call: ParkedCall,
  resolution: ApprovalResolved | null
): RowOp =>
  upsert("approvals", "approval_id", {
    approval_id: approvalId,
    public_id: call.publicId,
    conversation_id: c.conversationId,
    org_id: c.orgId,
    workspace_id: c.workspaceId,
    run_id: call.runId,
    tool_call_id: call.toolCallId,
    capability: call.capability,
    input: jsonb(call.input),
    input_preview: call.inputPreview,
    user_id: call.userId,
    status: resolution?.decision ?? "parked",
    expires_at: call.expiresAt,
    parked_at: call.parkedAt,
    note: resolution?.note ?? null,
    resolved_by: resolution?.userId ?? null,
    resolved_at: resolution?.resolvedAt ?? null,
    execution_run_id: resolution?.executionRunId ?? null,
    receipt: resolution?.receipt ?? null
  })

const questionRow = (
  c: ActiveConversation,
  questionId: string,
  asked: AskedQuestion,
  end: { readonly status: "waiting" | "answered" | "closed"; readonly answer: string | null; readonly reason: string | null; readonly endedAt: string | null }
): RowOp =>
  upsert("questions", "question_id", {
    question_id: questionId,
    conversation_id: c.conversationId,
    org_id: c.orgId,
    workspace_id: c.workspaceId,
    run_id: asked.runId,
    user_id: asked.userId,
    question: asked.question,
    options: asked.options,
    status: end.status,
    answer: end.answer,
    reason: end.reason,
    deadline: asked.deadline,
    asked_at: asked.askedAt,
    ended_at: end.endedAt
  })

export const project = (after: ConversationState, event: ConversationEvent, _ctx: EventContext): ReadonlyArray<RowOp> => {
  if (after._tag === "Absent") return []
  switch (event._tag) {
    case "run.taped":
      // the tape is read from the log itself (`svc turn replay`): no read model holds it
      return []
    case "conversation.started":
    case "summary.rewritten":
      return [conversationRow(after)]
    case "message.saved":
      return [
        conversationRow(after),
        upsert("messages", "message_id", {
          message_id: event.messageId,
          conversation_id: event.conversationId,
          run_id: event.runId,
          role: event.role,
          content: event.content,
          attachments: event.attachments,
          // the count after this message is its place
          position: after.messageCount,
          created_at: event.savedAt
        })
      ]
    case "run.started":
      return [conversationRow(after), runRow(after, event.runId, after.runs[event.runId], null)]
    case "run.stop_requested":
      return [runRow(after, event.runId, after.runs[event.runId], null)]
    case "run.finished":
      return [runRow(after, event.runId, event.run, event)]
    case "tool_call.parked":
      return [approvalRow(after, event.approvalId, after.approvals[event.approvalId], null)]
    case "approval.resolved":
      return [approvalRow(after, event.approvalId, event.parked, event)]
    case "question.asked":
      return [questionRow(after, event.questionId, after.questions[event.questionId], { status: "waiting", answer: null, reason: null, endedAt: null })]
    case "question.answered":
      return [questionRow(after, event.questionId, event.asked, { status: "answered", answer: event.answer, reason: null, endedAt: event.answeredAt })]
    case "question.closed":
      return [questionRow(after, event.questionId, event.asked, { status: "closed", answer: null, reason: event.reason, endedAt: event.closedAt })]
    case "run.updated":
      return [
        upsert("run_edits", "run_id", {
          run_id: event.runId,
          conversation_id: event.conversationId,
          title: event.title,
          tags: event.tags,
          pinned: event.pinned,
          updated_at: event.updatedAt
        })
      ]
    case "run.streamed":
      return [
        {
          op: "insert",
          table: "run_stream_chunks",
          pk: ["run_id", "first_seq"],
          row: {
            run_id: event.runId,
            conversation_id: event.conversationId,
            first_seq: event.events[0].seq,
            last_seq: event.events[event.events.length - 1].seq,
            events: event.events,
            recorded_at: event.recordedAt
          }
        }
      ]
  }
}
