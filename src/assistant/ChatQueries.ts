/**
 * Read-model queries of assistant chat (migration 0007, projected by the conversation actor).
 * Routes accept a conversation or an approval by UUID or public id; anything else is simply not
 * found, never a SQL error. Every query that a route reaches is scoped to the caller's workspace.
 */
import { Effect } from "effect"
import type { Json } from "../../actors/kernel.ts"
import { Db, type DbError, query } from "../../streams/Db.ts"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const PUBLIC_ID = (prefix: string) => new RegExp(`^${prefix}_[0-9a-f]{32}$`)
const CONVERSATION_PUBLIC_ID = PUBLIC_ID("cnv")
const APPROVAL_PUBLIC_ID = PUBLIC_ID("apr")

/** Which column an id names: the UUID primary key, the public id, or neither. */
const idColumn = (id: string, publicId: RegExp, pk: string): { readonly column: string; readonly value: string } | undefined =>
  UUID.test(id) ? { column: pk, value: id.toLowerCase() } : publicId.test(id) ? { column: "public_id", value: id } : undefined

export interface ConversationRef {
  readonly conversationId: string
  readonly publicId: string
  readonly orgId: string
  readonly workspaceId: string
  /** The person whose conversation it is. */
  readonly userId: string
}

export const findConversation = (workspaceId: string, idOrPublicId: string): Effect.Effect<ConversationRef | undefined, DbError, Db> =>
  Effect.gen(function* () {
    const by = idColumn(idOrPublicId, CONVERSATION_PUBLIC_ID, "conversation_id")
    if (by === undefined) return undefined
    const db = yield* Db
    const [row] = yield* query("find conversation", () => db.sql`
      select conversation_id, public_id, org_id, workspace_id, created_by from ${db.table("conversations")}
      where workspace_id = ${workspaceId} and ${db.sql(by.column)} = ${by.value}
      limit 1`)
    return row === undefined
      ? undefined
      : { conversationId: row.conversation_id, publicId: row.public_id, orgId: row.org_id, workspaceId: row.workspace_id, userId: row.created_by }
  })

export interface ChatMessage {
  readonly messageId: string
  readonly role: "user" | "assistant"
  readonly content: string
  /** `gen_` file ids. */
  readonly attachments: ReadonlyArray<string>
  /** 1-based place in the conversation. */
  readonly position: number
}

export interface ConversationHistory {
  /** The last messages, oldest first. */
  readonly messages: ReadonlyArray<ChatMessage>
  /** How many messages precede them. */
  readonly older: number
  readonly summary: { readonly text: string; readonly coversMessages: number; readonly atTurn: number } | null
  readonly messageCount: number
  readonly turnCount: number
}

const messageOf = (row: Record<string, any>): ChatMessage => ({
  messageId: row.message_id,
  role: row.role,
  content: row.content,
  attachments: row.attachments,
  position: row.position
})

/** The history a turn sends its model: the last `verbatim` messages word for word, and the summary
 * standing for older ones. An unknown conversation has an empty history. */
export const loadHistory = (conversationId: string, verbatim = 50): Effect.Effect<ConversationHistory, DbError, Db> =>
  Effect.gen(function* () {
    const db = yield* Db
    const [conversation] = yield* query("load conversation", () => db.sql`
      select message_count, turn_count, summary, summary_covers_messages, summary_at_turn
      from ${db.table("conversations")} where conversation_id = ${conversationId}`)
    const latest = yield* query("load messages", () => db.sql`
      select message_id, role, content, attachments, position from ${db.table("messages")}
      where conversation_id = ${conversationId} order by position desc limit ${verbatim}`)
    const messages = latest.map(messageOf).reverse()
    return {
      messages,
      older: messages.length === 0 ? (conversation?.message_count ?? 0) : messages[0].position - 1,
      summary:
        conversation?.summary == null
          ? null
          : { text: conversation.summary, coversMessages: conversation.summary_covers_messages, atTurn: conversation.summary_at_turn },
      messageCount: conversation?.message_count ?? 0,
      turnCount: conversation?.turn_count ?? 0
    }
  })

/** The messages at positions 1 to `upToPosition`, oldest first (what a summary is written from). */
export const olderMessages = (conversationId: string, upToPosition: number): Effect.Effect<ReadonlyArray<ChatMessage>, DbError, Db> =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("load older messages", () => db.sql`
      select message_id, role, content, attachments, position from ${db.table("messages")}
      where conversation_id = ${conversationId} and position <= ${upToPosition} order by position`)
    return rows.map(messageOf)
  })

export interface ApprovalRecord {
  readonly approvalId: string
  readonly publicId: string
  readonly conversationId: string
  readonly runId: string
  readonly toolCallId: string
  /** The asking person. */
  readonly userId: string
  readonly capability: string
  readonly input: Json
  readonly inputPreview: string
  readonly status: "parked" | "approved" | "denied"
  readonly expiresAt: string
  readonly executionRunId: string | null
}

export const findApproval = (workspaceId: string, idOrPublicId: string): Effect.Effect<ApprovalRecord | undefined, DbError, Db> =>
  Effect.gen(function* () {
    const by = idColumn(idOrPublicId, APPROVAL_PUBLIC_ID, "approval_id")
    if (by === undefined) return undefined
    const db = yield* Db
    const [row] = yield* query("find approval", () => db.sql`
      select approval_id, public_id, conversation_id, run_id, tool_call_id, user_id, capability, input, input_preview,
        status, expires_at, execution_run_id
      from ${db.table("approvals")}
      where workspace_id = ${workspaceId} and ${db.sql(by.column)} = ${by.value}
      limit 1`)
    return row === undefined
      ? undefined
      : {
          approvalId: row.approval_id,
          publicId: row.public_id,
          conversationId: row.conversation_id,
          runId: row.run_id,
          toolCallId: row.tool_call_id,
          userId: row.user_id,
          capability: row.capability,
          input: row.input,
          inputPreview: row.input_preview,
          status: row.status,
          expiresAt: (row.expires_at as Date).toISOString(),
          executionRunId: row.execution_run_id
        }
  })

export interface QuestionRecord {
  readonly questionId: string
  readonly conversationId: string
  readonly runId: string
  /** The asking person. */
  readonly userId: string
  readonly status: "waiting" | "answered" | "closed"
}

export const findQuestion = (workspaceId: string, questionId: string): Effect.Effect<QuestionRecord | undefined, DbError, Db> =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("find question", () => db.sql`
      select question_id, conversation_id, run_id, user_id, status from ${db.table("questions")}
      where question_id = ${questionId} and workspace_id = ${workspaceId}`)
    return row === undefined
      ? undefined
      : { questionId: row.question_id, conversationId: row.conversation_id, runId: row.run_id, userId: row.user_id, status: row.status }
  })

export interface RunRef {
  readonly runId: string
  readonly conversationId: string
}

/** The person's running turn with this turn id (the cancel route). */
export const findRunningTurn = (workspaceId: string, turnId: string, userId: string): Effect.Effect<RunRef | undefined, DbError, Db> =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("find running turn", () => db.sql`
      select run_id, conversation_id from ${db.table("runs")}
      where workspace_id = ${workspaceId} and turn_id = ${turnId} and user_id = ${userId} and kind = 'turn' and status = 'running'
      order by started_at desc limit 1`)
    return row === undefined ? undefined : { runId: row.run_id, conversationId: row.conversation_id }
  })

export interface RunRecord {
  readonly runId: string
  readonly conversationId: string
  readonly status: "running" | "finished" | "failed" | "stopped"
  /** Null while running. */
  readonly reply: string | null
  /** The turn result (spec 2.3); null while running and on failure. */
  readonly result: Json
  readonly error: { readonly code: string | null; readonly reason: string | null; readonly message: string } | null
  readonly kind: "turn" | "approval"
  readonly userId: string
}

export const findRun = (workspaceId: string, runId: string): Effect.Effect<RunRecord | undefined, DbError, Db> =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("find run", () => db.sql`
      select run_id, conversation_id, status, reply, result, error, kind, user_id from ${db.table("runs")}
      where run_id = ${runId} and workspace_id = ${workspaceId}`)
    return row === undefined
      ? undefined
      : {
          runId: row.run_id,
          conversationId: row.conversation_id,
          status: row.status,
          reply: row.reply,
          result: row.result,
          error: row.error,
          kind: row.kind,
          userId: row.user_id
        }
  })

export interface QuestionRef {
  readonly questionId: string
  readonly conversationId: string
}

/** Waiting questions whose deadline is at or before `nowIso`, earliest first. */
export const overdueQuestions = (nowIso: string, limit: number): Effect.Effect<ReadonlyArray<QuestionRef>, DbError, Db> =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("overdue questions", () => db.sql`
      select question_id, conversation_id from ${db.table("questions")}
      where status = 'waiting' and deadline <= ${nowIso} order by deadline limit ${limit}`)
    return rows.map((r) => ({ questionId: r.question_id as string, conversationId: r.conversation_id as string }))
  })

/** Running runs started before `beforeIso`, oldest first: a sweeper ends those whose process died. */
export const staleRunningRuns = (beforeIso: string, limit: number): Effect.Effect<ReadonlyArray<RunRef>, DbError, Db> =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("stale running runs", () => db.sql`
      select run_id, conversation_id from ${db.table("runs")}
      where status = 'running' and started_at < ${beforeIso} order by started_at limit ${limit}`)
    return rows.map((r) => ({ runId: r.run_id as string, conversationId: r.conversation_id as string }))
  })
