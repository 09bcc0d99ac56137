/**
 * What the chat pages read back (the conversation actor's read models, migrations 0007 and 0020):
 * a person's conversations and runs, newest first; a conversation's whole thread with each run's
 * turn result; one run's transcript; the workspace's approvals still waiting. Every query is scoped
 * to the workspace, and all but the approvals inbox to the person.
 */
import { Effect, Schema } from "effect"
import { RunError, Usage } from "../../actors/conversation/events.ts"
import { Db, type DbService, query } from "../../streams/Db.ts"
import { Execution } from "./Assistant.ts"
import { timeIdPage } from "../platform/Paging.ts"
import { isOwn } from "../checkpoint/Person.ts"
import { clipped } from "../platform/StorableText.ts"

const Iso = Schema.String
const iso = (value: Date) => value.toISOString()
const isoOrNull = (value: Date | null) => (value === null ? null : value.toISOString())

/** How long a conversation's title is at most: its first message on one line, cut. */
const TITLE_CHARS = 80

const titleOf = (firstMessage: string | null) => clipped((firstMessage ?? "").replace(/\s+/g, " ").trim(), TITLE_CHARS)

export const ConversationEntry = Schema.Struct({
  /** `cnv_`. */
  publicId: Schema.String,
  title: Schema.String,
  messageCount: Schema.Int,
  createdAt: Iso,
  lastMessageAt: Iso
})
type ConversationEntry = typeof ConversationEntry.Type

export const RunStatus = Schema.Literal("running", "finished", "failed", "stopped")

/** A run as a list shows it. */
export const RunEntry = Schema.Struct({
  /** `tse_`. */
  runId: Schema.String,
  /** The conversation's `cnv_`. */
  conversationId: Schema.String,
  /** `turn`: a person's message and the agent's answer; `approval`: an approved call run on its own. */
  kind: Schema.Literal("turn", "approval"),
  status: RunStatus,
  /** The turn id its person sent (to stop it); null when none was sent. */
  turnId: Schema.NullOr(Schema.String),
  model: Schema.String,
  tier: Schema.NullOr(Schema.String),
  effort: Schema.NullOr(Schema.String),
  startedAt: Iso,
  /** Null while running. */
  endedAt: Schema.NullOr(Iso),
  /** Null while running. */
  usage: Schema.NullOr(Usage),
  error: Schema.NullOr(RunError)
})
type RunEntry = typeof RunEntry.Type

const ToolCall = Schema.Struct({
  toolCallId: Schema.String,
  toolName: Schema.String,
  outcome: Schema.Literal("completed", "failed", "denied", "cancelled", "parked"),
  durationMs: Schema.Number,
  approvalId: Schema.optional(Schema.String)
})

const ParkedCard = Schema.Struct({ approvalId: Schema.String, capability: Schema.String, expiresAt: Iso })

/** A parked call of a run, and what became of it. */
export const ApprovalEntry = Schema.Struct({
  /** `apr_`. */
  approvalId: Schema.String,
  capability: Schema.String,
  inputPreview: Schema.String,
  /** `pending` until answered or expired. */
  status: Schema.Literal("pending", "approved", "denied", "expired"),
  /** The asking person: the only one who may answer (spec 4.1 rule 6). */
  requestedBy: Schema.String,
  expiresAt: Iso,
  resolvedAt: Schema.NullOr(Iso),
  note: Schema.NullOr(Schema.String),
  /** The run that executed the approved call. */
  executionRunId: Schema.NullOr(Schema.String)
})
type ApprovalEntry = typeof ApprovalEntry.Type

/** A run in its thread: the turn result (spec 2.3) that the stream's `done` carried, and its approvals. */
export const ThreadRun = Schema.Struct({
  ...RunEntry.fields,
  /** Empty while running and after a failure (the turn result is recorded only when the turn answered). */
  toolCalls: Schema.Array(ToolCall),
  parkedCards: Schema.Array(ParkedCard),
  stopped: Schema.Boolean,
  /** An approval run's outcome (spec 2.4); null for a turn. */
  execution: Schema.NullOr(Execution),
  /** What an approval run's call answered, as recorded; null for a turn, and for a call that failed or is still running. */
  output: Schema.Unknown,
  approvals: Schema.Array(ApprovalEntry)
})
type ThreadRun = typeof ThreadRun.Type

export const ThreadMessage = Schema.Struct({
  messageId: Schema.String,
  role: Schema.Literal("user", "assistant"),
  content: Schema.String,
  /** `gen_` file ids. */
  attachments: Schema.Array(Schema.String),
  createdAt: Iso,
  runId: Schema.String
})

export const Thread = Schema.Struct({
  conversationId: Schema.String,
  ...ConversationEntry.fields,
  /** Oldest first. */
  messages: Schema.Array(ThreadMessage),
  /** Oldest first. */
  runs: Schema.Array(ThreadRun)
})
type Thread = typeof Thread.Type

const Question = Schema.Struct({
  questionId: Schema.String,
  question: Schema.String,
  options: Schema.Array(Schema.String),
  status: Schema.Literal("waiting", "answered", "closed"),
  answer: Schema.NullOr(Schema.String),
  /** `timeout` or `ended` once closed. */
  reason: Schema.NullOr(Schema.String),
  askedAt: Iso,
  endedAt: Schema.NullOr(Iso)
})

/** One run's whole record. */
export const Transcript = Schema.Struct({
  ...ThreadRun.fields,
  /** The person whose run it is. */
  userId: Schema.String,
  /** The person's message; null for an approval run. */
  userMessage: Schema.NullOr(Schema.Struct({ messageId: Schema.String, content: Schema.String, attachments: Schema.Array(Schema.String), createdAt: Iso })),
  /** The whole reply (on a stopped run, what was written before the stop); null while running. */
  reply: Schema.NullOr(Schema.String),
  /** For an approval run: the approval (`apr_`) whose call it executed. */
  approvalId: Schema.NullOr(Schema.String),
  /** Whether the model was sent the conversation's summary (spec 2.5). */
  carriedSummary: Schema.Boolean,
  /** Null while running. */
  durationMs: Schema.NullOr(Schema.Number),
  questions: Schema.Array(Question)
})
export type Transcript = typeof Transcript.Type

type Row = Record<string, any>

// ---------------------------------------------------------------------------------------------
// conversations

/** The conversations' listing columns: the first user message and the last message's time. */
const conversationColumns = (db: DbService) => db.sql`
  c.conversation_id, c.public_id, c.message_count, c.created_at, l.last_at, f.content as first_content
  from ${db.table("conversations")} c
  left join lateral (
    select coalesce(max(created_at), c.created_at) as last_at from ${db.table("messages")} where conversation_id = c.conversation_id
  ) l on true
  left join lateral (
    select content from ${db.table("messages")} where conversation_id = c.conversation_id and role = 'user' order by position limit 1
  ) f on true`

const conversationOf = (row: Row): ConversationEntry => ({
  publicId: row.public_id,
  title: titleOf(row.first_content),
  messageCount: row.message_count,
  createdAt: iso(row.created_at),
  lastMessageAt: iso(row.last_at)
})

/** The person's conversations in the workspace, the latest message first. */
export const conversationsOf = (workspaceId: string, userId: string, after: readonly [string, string] | undefined, limit: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("list conversations", () => db.sql`
      select ${conversationColumns(db)}
      where c.workspace_id = ${workspaceId} and c.created_by = ${userId}
        ${after === undefined ? db.sql`` : db.sql`and (l.last_at, c.conversation_id) < (${new Date(after[0])}, ${after[1]})`}
      order by l.last_at desc, c.conversation_id desc limit ${limit + 1}`)
    const { page, nextCursor } = timeIdPage(rows, limit, (last) => [last.last_at as Date, last.conversation_id as string])
    return { conversations: page.map(conversationOf), nextCursor }
  })

// ---------------------------------------------------------------------------------------------
// runs

const runColumns = (db: DbService) => db.sql`
  r.run_id, r.conversation_id, c.public_id as conversation_public_id, r.kind, r.status, r.turn_id, r.model, r.tier,
  r.effort, r.started_at, r.ended_at, r.usage, r.error, r.result, r.user_id, r.reply, r.carried_summary,
  a.public_id as approval_public_id
  from ${db.table("runs")} r
  join ${db.table("conversations")} c using (conversation_id)
  left join ${db.table("approvals")} a on a.approval_id = r.approval_id`

const runEntryOf = (row: Row): RunEntry => ({
  runId: row.run_id,
  conversationId: row.conversation_public_id,
  kind: row.kind,
  status: row.status,
  turnId: row.turn_id,
  model: row.model,
  tier: row.tier,
  effort: row.effort,
  startedAt: iso(row.started_at),
  endedAt: isoOrNull(row.ended_at),
  usage: row.usage,
  error: row.error
})

/** An approval's state as of `now`: a parked call past its expiry can no longer be answered. */
const approvalOf = (row: Row, now: Date): ApprovalEntry => ({
  approvalId: row.public_id,
  capability: row.capability,
  inputPreview: row.input_preview,
  status: row.status !== "parked" ? row.status : (row.expires_at as Date) <= now ? "expired" : "pending",
  requestedBy: row.user_id,
  expiresAt: iso(row.expires_at),
  resolvedAt: isoOrNull(row.resolved_at),
  note: row.note,
  executionRunId: row.execution_run_id
})

/** A run in its thread, from its row and its approvals. */
const threadRunOf = (row: Row, approvals: ReadonlyArray<ApprovalEntry>): ThreadRun => {
  // a turn's result is its turn result (spec 2.3); an approval run's is `{ execution, output? }`
  const result: Row = row.result ?? {}
  return {
    ...runEntryOf(row),
    toolCalls: result.toolCalls ?? [],
    parkedCards: result.parkedCards ?? [],
    stopped: result.stopped === true,
    execution: row.kind === "approval" ? result.execution ?? null : null,
    output: row.kind === "approval" ? result.output ?? null : null,
    approvals
  }
}

/** The person's runs in the workspace, the latest started first. */
export const runsOf = (
  workspaceId: string,
  userId: string,
  filter: { readonly conversationId: string | undefined; readonly status: RunEntry["status"] | undefined },
  after: readonly [string, string] | undefined,
  limit: number
) =>
  Effect.gen(function* () {
    const db = yield* Db
    const sql = db.sql
    const rows = yield* query("list runs", () => sql`
      select ${runColumns(db)}
      where r.workspace_id = ${workspaceId} and r.user_id = ${userId}
        ${filter.conversationId === undefined ? sql`` : sql`and r.conversation_id = ${filter.conversationId}`}
        ${filter.status === undefined ? sql`` : sql`and r.status = ${filter.status}`}
        ${after === undefined ? sql`` : sql`and (r.started_at, r.run_id) < (${new Date(after[0])}, ${after[1]})`}
      order by r.started_at desc, r.run_id desc limit ${limit + 1}`)
    const { page, nextCursor } = timeIdPage(rows, limit, (last) => [last.started_at as Date, last.run_id as string])
    return { runs: page.map(runEntryOf), nextCursor }
  })

const approvalsWhere = (db: DbService, conversationId: string, runId: string | null) => db.sql`
  select public_id, run_id, capability, input_preview, status, user_id, expires_at, resolved_at, note, execution_run_id
  from ${db.table("approvals")}
  where conversation_id = ${conversationId} ${runId === null ? db.sql`` : db.sql`and run_id = ${runId}`}
  order by parked_at, approval_id`

/** The conversation's whole thread as of `now`: its messages and its runs, oldest first. */
export const readThread = (conversationId: string, now: Date) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [head, messages, runs, approvals] = yield* Effect.all([
      query("conversation", () => db.sql`select ${conversationColumns(db)} where c.conversation_id = ${conversationId}`),
      query("conversation messages", () => db.sql`
        select message_id, role, content, attachments, created_at, run_id from ${db.table("messages")}
        where conversation_id = ${conversationId} order by position`),
      query("conversation runs", () => db.sql`select ${runColumns(db)} where r.conversation_id = ${conversationId} order by r.started_at, r.run_id`),
      query("conversation approvals", () => approvalsWhere(db, conversationId, null))
    ], { concurrency: "unbounded" })
    if (head.length === 0) return undefined
    const approvalsByRun = new Map<string, Array<ApprovalEntry>>()
    for (const row of approvals) approvalsByRun.set(row.run_id, [...(approvalsByRun.get(row.run_id) ?? []), approvalOf(row, now)])
    const thread: Thread = {
      conversationId,
      ...conversationOf(head[0]),
      messages: messages.map((m: Row) => ({
        messageId: m.message_id,
        role: m.role,
        content: m.content,
        attachments: m.attachments,
        createdAt: iso(m.created_at),
        runId: m.run_id
      })),
      runs: runs.map((r: Row) => threadRunOf(r, approvalsByRun.get(r.run_id) ?? []))
    }
    return thread
  })

/** One run of the workspace with everything recorded of it, as of `now`; undefined when there is none. */
export const readTranscript = (workspaceId: string, runId: string, now: Date) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("run", () => db.sql`select ${runColumns(db)} where r.run_id = ${runId} and r.workspace_id = ${workspaceId}`)
    if (row === undefined) return undefined
    const [messages, approvals, questions] = yield* Effect.all([
      query("run message", () => db.sql`
        select message_id, content, attachments, created_at from ${db.table("messages")}
        where run_id = ${runId} and role = 'user' order by position limit 1`),
      query("run approvals", () => approvalsWhere(db, row.conversation_id, runId)),
      query("run questions", () => db.sql`
        select question_id, question, options, status, answer, reason, asked_at, ended_at from ${db.table("questions")}
        where run_id = ${runId} order by asked_at, question_id`)
    ], { concurrency: "unbounded" })
    const message = messages[0]
    const transcript: Transcript = {
      ...threadRunOf(row, approvals.map((a) => approvalOf(a, now))),
      userId: row.user_id,
      userMessage: message === undefined
        ? null
        : { messageId: message.message_id, content: message.content, attachments: message.attachments, createdAt: iso(message.created_at) },
      reply: row.reply,
      approvalId: row.approval_public_id,
      carriedSummary: row.carried_summary,
      durationMs: row.ended_at === null ? null : (row.ended_at as Date).getTime() - (row.started_at as Date).getTime(),
      questions: questions.map((q: Row) => ({
        questionId: q.question_id,
        question: q.question,
        options: q.options,
        status: q.status,
        answer: q.answer,
        reason: q.reason,
        askedAt: iso(q.asked_at),
        endedAt: isoOrNull(q.ended_at)
      }))
    }
    return transcript
  })

// ---------------------------------------------------------------------------------------------
// the approvals inbox

export const PendingApproval = Schema.Struct({
  /** `apr_`. */
  approvalId: Schema.String,
  capability: Schema.String,
  inputPreview: Schema.String,
  /** The asking person's user id. */
  requestedBy: Schema.String,
  /** The asking person's name, or their email when they gave no name. */
  requestedByName: Schema.String,
  /** The conversation's `cnv_`; null on another person's call, whose conversation is theirs alone. */
  conversationId: Schema.NullOr(Schema.String),
  /** The run (`tse_`) that parked the call; null on another person's call, whose run is theirs alone. */
  runId: Schema.NullOr(Schema.String),
  parkedAt: Iso,
  expiresAt: Iso,
  /** Whether the caller may answer it: only the person who asked (spec 4.1 rule 6). */
  canAnswer: Schema.Boolean
})

/** The workspace's parked calls not yet answered nor expired at `now`, the latest parked first; `userId` is the caller's person.
 * Another person's call says who asked and what, but not where: its conversation and run are theirs alone. */
export const pendingApprovalsOf = (workspaceId: string, userId: string, now: Date, after: readonly [string, string] | undefined, limit: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const sql = db.sql
    const rows = yield* query("pending approvals", () => sql`
      select a.approval_id, a.public_id, a.capability, a.input_preview, a.user_id, c.public_id as conversation_public_id,
        a.run_id, a.parked_at, a.expires_at, coalesce(nullif(u.name, ''), u.email, a.user_id) as user_name
      from ${db.table("approvals")} a join ${db.table("conversations")} c using (conversation_id)
        left join ${db.table("users")} u on u.user_id = a.user_id
      where a.workspace_id = ${workspaceId} and a.status = 'parked' and a.expires_at > ${now}
        ${after === undefined ? sql`` : sql`and (a.parked_at, a.approval_id) < (${new Date(after[0])}, ${after[1]})`}
      order by a.parked_at desc, a.approval_id desc limit ${limit + 1}`)
    const { page, nextCursor } = timeIdPage(rows, limit, (last) => [last.parked_at as Date, last.approval_id as string])
    return {
      approvals: page.map((a) => {
        const own = isOwn({ userId: a.user_id as string }, userId)
        return {
          approvalId: a.public_id,
          capability: a.capability,
          inputPreview: a.input_preview,
          requestedBy: a.user_id,
          requestedByName: a.user_name,
          conversationId: own ? a.conversation_public_id : null,
          runId: own ? a.run_id : null,
          parkedAt: iso(a.parked_at),
          expiresAt: iso(a.expires_at),
          canAnswer: own
        }
      }),
      nextCursor
    }
  })
