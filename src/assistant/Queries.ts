/**
 * The assistant wing's SQL: the conversation actor's read models (migrations 0007 and 0020:
 * conversations, messages, runs, approvals, questions), the `agents` read model, the models
 * actor's `model_tiers` and `model_keys`, and uploaded files (`files`, and their bytes in
 * `file_contents`).
 *
 * Routes accept a conversation or an approval by UUID or public id; anything else is simply not
 * found, never a SQL error. Every query that a route reaches is scoped to the caller's workspace,
 * and the chat pages' listings (all but the approvals inbox) to the person.
 */
import { Effect } from "effect"
import type postgres from "postgres"
import type { Json } from "../../actors/kernel.ts"
import { Db, type DbError, type DbService, query, queryFirst } from "../../streams/Db.ts"
import { isOwn } from "../checkpoint/Person.ts"
import { timeIdPage } from "../platform/Paging.ts"
import { clipped } from "../platform/StorableText.ts"
import type { ToolCallRecord } from "../platform/Wire.ts"
import type { ApprovalEntry, ConversationEntry, RunEntry, Skill, Thread, ThreadRun, Transcript } from "./Api.ts"
import { type PersonalDataError, type PersonalOpener, personalOpener } from "../audit/PersonalData.ts"
import type { KeyManagement } from "../marketplace/Envelope.ts"

/** An uploaded file as the read model has it. */
export interface FileRow {
  readonly id: string
  readonly orgId: string
  readonly workspaceId: string
  readonly userId: string
  readonly name: string
  readonly mediaType: string
  readonly size: number
  readonly sha256: string
  /** ISO 8601. */
  readonly uploadedAt: string
}

/** A workspace agent as its read model has it (or the built-in assistant). */
export interface WorkspaceAgent {
  readonly slug: string
  readonly name: string
  readonly description: string
  /** Joins the system prompt of the agent's turns; empty for the built-in assistant. */
  readonly instructions: string
  /** A model tier slug for turns that name none; null: the organization's default tier. */
  readonly tier: string | null
  /** Capability names its turns are offered; null for the built-in assistant: every agent tool the caller's role allows. */
  readonly tools: ReadonlyArray<string> | null
  /** Slugs of the workspace skills attached; none for the built-in assistant. */
  readonly skills: ReadonlyArray<string>
  readonly builtIn: boolean
  /** 0 for the built-in assistant, which is never changed. */
  readonly version: number
  /** ISO 8601; null for the built-in assistant. */
  readonly createdAt: string | null
  readonly updatedAt: string | null
}

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
  /** Empty once its person was erased. */
  readonly content: string
  /** Whether its person was erased (docs/audit.md): the content can no longer be opened. */
  readonly erased: boolean
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

/** A person's sealed words (actors/personal.ts) as read: empty, and marked, once they were erased. */
const openedText = (open: PersonalOpener, value: string) => {
  const text = open.text(value)
  return { content: text ?? "", erased: text === null }
}

/** Opens sealed values; a read of rows rebuilt elsewhere (as of a moment) still takes the keys from the live schema. */
export type Opener<R> = (values: ReadonlyArray<unknown>) => Effect.Effect<PersonalOpener, DbError | PersonalDataError, R>

/** The stored messages, opened. */
const messagesOf = (rows: ReadonlyArray<Record<string, any>>) =>
  Effect.map(personalOpener(rows.map((row) => row.content)), (open) =>
    rows.map((row): ChatMessage => ({
      messageId: row.message_id,
      role: row.role,
      ...openedText(open, row.content),
      attachments: row.attachments,
      position: row.position
    })))

/** The history a turn sends its model: the last `verbatim` messages word for word, and the summary
 * standing for older ones. An unknown conversation has an empty history. */
export const loadHistory = (conversationId: string, verbatim = 50): Effect.Effect<ConversationHistory, DbError | PersonalDataError, Db | KeyManagement> =>
  Effect.gen(function* () {
    const db = yield* Db
    const [conversation] = yield* query("load conversation", () => db.sql`
      select message_count, turn_count, summary, summary_covers_messages, summary_at_turn
      from ${db.table("conversations")} where conversation_id = ${conversationId}`)
    const latest = yield* query("load messages", () => db.sql`
      select message_id, role, content, attachments, position from ${db.table("messages")}
      where conversation_id = ${conversationId} order by position desc limit ${verbatim}`)
    const messages = (yield* messagesOf(latest)).reverse()
    const summary: string | null = conversation?.summary == null ? null : (yield* personalOpener([conversation.summary])).text(conversation.summary)
    return {
      messages,
      older: messages.length === 0 ? (conversation?.message_count ?? 0) : messages[0].position - 1,
      summary:
        summary === null
          ? null
          : { text: summary, coversMessages: conversation!.summary_covers_messages, atTurn: conversation!.summary_at_turn },
      messageCount: conversation?.message_count ?? 0,
      turnCount: conversation?.turn_count ?? 0
    }
  })

/** The messages at positions 1 to `upToPosition`, oldest first (what a summary is written from). */
export const olderMessages = (conversationId: string, upToPosition: number): Effect.Effect<ReadonlyArray<ChatMessage>, DbError | PersonalDataError, Db | KeyManagement> =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("load older messages", () => db.sql`
      select message_id, role, content, attachments, position from ${db.table("messages")}
      where conversation_id = ${conversationId} and position <= ${upToPosition} order by position`)
    return yield* messagesOf(rows)
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

/** The approval with its call's input and preview opened (sealed under the asking person's key: docs/audit.md); erased, `null` and "". */
export const findApproval = (workspaceId: string, idOrPublicId: string): Effect.Effect<ApprovalRecord | undefined, DbError | PersonalDataError, Db | KeyManagement> =>
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
    if (row === undefined) return undefined
    const open = yield* personalOpener([row.input, row.input_preview])
    return {
      approvalId: row.approval_id,
      publicId: row.public_id,
      conversationId: row.conversation_id,
      runId: row.run_id,
      toolCallId: row.tool_call_id,
      userId: row.user_id,
      capability: row.capability,
      input: open.json(row.input) as Json,
      inputPreview: open.text(row.input_preview) ?? "",
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

/** The person's turn named by its run id (tse_) or by the turnId they sent (the latest run with it). */
export const findOwnTurn = (workspaceId: string, userId: string, id: string): Effect.Effect<RunRecord | undefined, DbError | PersonalDataError, Db | KeyManagement> =>
  Effect.gen(function* () {
    const db = yield* Db
    return yield* queryFirst("find own turn", () => db.sql`
      select run_id, conversation_id, status, reply, result, error, kind, user_id from ${db.table("runs")}
      where workspace_id = ${workspaceId} and user_id = ${userId} and kind = 'turn' and (run_id = ${id} or turn_id = ${id})
      order by (run_id = ${id}) desc, started_at desc limit 1`, runRecordOf).pipe(Effect.flatMap(openedRun))
  })

/** The person's running turn in a conversation, with the turnId it was started under (a useChat chat's turn: src/assistant/UiChat.ts). */
export const findRunningTurnIn = (workspaceId: string, userId: string, conversationId: string): Effect.Effect<(RunRecord & { readonly turnId: string | null }) | undefined, DbError | PersonalDataError, Db | KeyManagement> =>
  Effect.gen(function* () {
    const db = yield* Db
    return yield* queryFirst("find running turn in conversation", () => db.sql`
      select run_id, conversation_id, status, reply, result, error, kind, user_id, turn_id from ${db.table("runs")}
      where workspace_id = ${workspaceId} and user_id = ${userId} and conversation_id = ${conversationId} and kind = 'turn' and status = 'running'
      order by started_at desc limit 1`, (row) => ({ ...runRecordOf(row), turnId: row.turn_id as string | null })).pipe(Effect.flatMap(openedRun))
  })

type StreamedEvents = ReadonlyArray<{ readonly seq: number; readonly event: Json }>

/** A recorded chunk's events, opened (actors/personal.ts); an erased person's events are left out. */
export const openStreamed = (events: StreamedEvents) =>
  Effect.map(personalOpener(events.map((e) => e.event)), (open) =>
    events.flatMap(({ seq, event }) => {
      const opened = open.json(event) as Json
      return opened === null ? [] : [{ seq, event: opened }]
    }))

/** The chunks a run's stream was recorded in (`run.streamed`), in the order of their first event. */
export const runStreamChunks = (runId: string): Effect.Effect<ReadonlyArray<StreamedEvents>, DbError | PersonalDataError, Db | KeyManagement> =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("run stream chunks", () => db.sql`
      select events from ${db.table("run_stream_chunks")} where run_id = ${runId} order by first_seq`)
    return yield* Effect.forEach(rows, (row) => openStreamed(row.events as StreamedEvents))
  })

/** A run's end (its record, or its `run.finished`) with the reply opened, alone and in the turn result; erased, it reads empty. */
export const openRunEnd = <T extends { readonly reply: string | null; readonly result: Json }>(end: T) => {
  const result = end.result
  const inResult = result !== null && typeof result === "object" && !Array.isArray(result) && typeof (result as Row).reply === "string"
    ? (result as Row).reply as string
    : undefined
  return Effect.map(personalOpener([end.reply, inResult]), (open): T => ({
    ...end,
    reply: end.reply === null ? null : open.text(end.reply) ?? "",
    result: inResult === undefined ? result : { ...(result as Row), reply: open.text(inResult) ?? "" }
  }))
}

const openedRun = <T extends RunRecord>(record: T | undefined) => (record === undefined ? Effect.succeed(undefined) : openRunEnd(record))

/** The conversation of a turn's run (of `orgId`'s, when named); undefined when there is no such turn. */
export const conversationOfTurn = (runId: string, orgId: string | null): Effect.Effect<string | undefined, DbError, Db> =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("conversation of a turn", () => db.sql`
      select conversation_id from ${db.table("runs")}
      where run_id = ${runId} and kind = 'turn' and (${orgId}::text is null or org_id = ${orgId})`)
    return rows[0]?.conversation_id as string | undefined
  })

/** The ended turns started at or after `since`, oldest first: what `svc turn replay --all` replays. */
export const endedTurnsSince = (since: Date): Effect.Effect<ReadonlyArray<string>, DbError, Db> =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("ended turns since", () => db.sql`
      select run_id from ${db.table("runs")}
      where kind = 'turn' and status <> 'running' and started_at >= ${since}
      order by started_at, run_id`)
    return rows.map((row) => row.run_id as string)
  })

const runRecordOf = (row: postgres.Row): RunRecord => ({
  runId: row.run_id,
  conversationId: row.conversation_id,
  status: row.status,
  reply: row.reply,
  result: row.result,
  error: row.error,
  kind: row.kind,
  userId: row.user_id
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

export const findRun = (workspaceId: string, runId: string): Effect.Effect<RunRecord | undefined, DbError | PersonalDataError, Db | KeyManagement> =>
  Effect.gen(function* () {
    const db = yield* Db
    return yield* queryFirst("find run", () => db.sql`
      select run_id, conversation_id, status, reply, result, error, kind, user_id from ${db.table("runs")}
      where run_id = ${runId} and workspace_id = ${workspaceId}`, runRecordOf).pipe(Effect.flatMap(openedRun))
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
/**
 * The runs still marked running whose process is gone: started before `beforeIso` (longer ago than
 * any turn runs), or, started before `settledIso`, on a node that no longer reports itself
 * (`cluster_nodes`) within `goneAfterMs` of the latest report, or reports a process started since.
 * Measured from the latest report, not from now, so a database that was away does not make every
 * node look gone until they report again.
 */
export const staleRunningRuns = (
  since: { readonly beforeIso: string; readonly settledIso: string; readonly goneAfterMs: number },
  limit: number
): Effect.Effect<ReadonlyArray<RunRef>, DbError, Db> =>
  Effect.gen(function* () {
    const db = yield* Db
    const nodes = db.table("cluster_nodes")
    const rows = yield* query("stale running runs", () => db.sql`
      select r.run_id, r.conversation_id from ${db.table("runs")} r
      where r.status = 'running' and (r.started_at < ${since.beforeIso} or (
        r.node_id is not null and r.started_at < ${since.settledIso} and not exists (
          select 1 from ${nodes} n
          where n.node_id = r.node_id and n.started_at <= r.started_at
            and n.seen_at > (select max(seen_at) from ${nodes}) - make_interval(secs => ${since.goneAfterMs / 1000}))))
      order by r.started_at limit ${limit}`)
    return rows.map((r) => ({ runId: r.run_id as string, conversationId: r.conversation_id as string }))
  })

// ---------------------------------------------------------------------------------------------
// what the chat pages read back: conversations, runs, threads, transcripts, the approvals inbox

const iso = (value: Date) => value.toISOString()
const isoOrNull = (value: Date | null) => (value === null ? null : value.toISOString())

/** How long a conversation's title is at most: its first message on one line, cut. */
const TITLE_CHARS = 80

const titleOf = (firstMessage: string | null) => clipped((firstMessage ?? "").replace(/\s+/g, " ").trim(), TITLE_CHARS)

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

/** The conversations' rows with their first message opened (erased: no title). */
const openedFirsts = (rows: ReadonlyArray<Row>) =>
  Effect.map(personalOpener(rows.map((row) => row.first_content)), (open) =>
    rows.map((row) => ({ ...row, first_content: row.first_content === null ? null : open.text(row.first_content) })))

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
    return { conversations: (yield* openedFirsts(page)).map(conversationOf), nextCursor }
  })

// ---------------------------------------------------------------------------------------------
// runs

const runColumns = (db: DbService) => db.sql`
  r.run_id, r.conversation_id, c.public_id as conversation_public_id, r.kind, r.status, r.turn_id, r.model, r.tier,
  r.effort, r.started_at, r.ended_at, r.usage, r.error, r.result, r.user_id, r.reply, r.carried_summary,
  a.public_id as approval_public_id, e.title, coalesce(e.tags, '[]'::jsonb) as tags, coalesce(e.pinned, false) as pinned
  from ${db.table("runs")} r
  join ${db.table("conversations")} c using (conversation_id)
  left join ${db.table("approvals")} a on a.approval_id = r.approval_id
  left join ${db.table("run_edits")} e on e.run_id = r.run_id`

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
  error: row.error,
  title: row.title,
  tags: row.tags,
  pinned: row.pinned
})

/** An approval's state as of `now`: a parked call past its expiry can no longer be answered. Its
 * input's preview is sealed under the asking person's key (docs/audit.md): opened, "" once erased. */
const approvalOf = (row: Row, now: Date, open: PersonalOpener): ApprovalEntry => ({
  approvalId: row.public_id,
  capability: row.capability,
  inputPreview: open.text(row.input_preview) ?? "",
  status: row.status !== "parked" ? row.status : (row.expires_at as Date) <= now ? "expired" : "pending",
  requestedBy: row.user_id,
  expiresAt: iso(row.expires_at),
  resolvedAt: isoOrNull(row.resolved_at),
  // the approver's note, sealed under their key: "" once erased
  note: row.note === null ? null : open.text(row.note) ?? "",
  executionRunId: row.execution_run_id,
  receipt: row.receipt
})

/** What an approval run's call answered, as its row holds it (sealed: docs/audit.md); undefined for a turn. */
const approvalOutputOf = (row: Row): unknown => (row.kind === "approval" ? row.result?.output : undefined)

/** A run in its thread, from its row and its approvals; the call's output opened, null once erased. */
const threadRunOf = (row: Row, approvals: ReadonlyArray<ApprovalEntry>, open: PersonalOpener): ThreadRun => {
  // a turn's result is its turn result (spec 2.3); an approval run's is `{ execution, output? }`
  const result: Row = row.result ?? {}
  // a parked call recorded as `parked` when the turn ended; denied since, it ends `denied` (spec 2.3)
  const denied = new Set(approvals.filter((a) => a.status === "denied").map((a) => a.approvalId))
  const toolCalls: ReadonlyArray<ToolCallRecord> = result.toolCalls ?? []
  return {
    ...runEntryOf(row),
    toolCalls: toolCalls.map((call) => (call.approvalId !== undefined && denied.has(call.approvalId) ? { ...call, outcome: "denied" as const } : call)),
    parkedCards: result.parkedCards ?? [],
    stopped: result.stopped === true,
    execution: row.kind === "approval" ? result.execution ?? null : null,
    output: open.json(approvalOutputOf(row)) ?? null,
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
  select public_id, run_id, capability, input_preview, status, user_id, expires_at, resolved_at, note, execution_run_id, receipt
  from ${db.table("approvals")}
  where conversation_id = ${conversationId} ${runId === null ? db.sql`` : db.sql`and run_id = ${runId}`}
  order by parked_at, approval_id`

/** The conversation's whole thread as of `now`: its messages and its runs, oldest first. */
export const readThread = <R>(conversationId: string, now: Date, opener: Opener<R>) =>
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
    const open = yield* opener([
      ...messages.map((m: Row) => m.content),
      head[0].first_content,
      ...approvals.flatMap((a: Row) => [a.input_preview, a.note]),
      ...runs.map(approvalOutputOf)
    ])
    const approvalsByRun = new Map<string, Array<ApprovalEntry>>()
    for (const row of approvals) approvalsByRun.set(row.run_id, [...(approvalsByRun.get(row.run_id) ?? []), approvalOf(row, now, open)])
    const thread: Thread = {
      conversationId,
      ...conversationOf({ ...head[0], first_content: head[0].first_content === null ? null : open.text(head[0].first_content) }),
      messages: messages.map((m: Row) => ({
        messageId: m.message_id,
        role: m.role,
        ...openedText(open, m.content),
        attachments: m.attachments,
        createdAt: iso(m.created_at),
        runId: m.run_id
      })),
      runs: runs.map((r: Row) => threadRunOf(r, approvalsByRun.get(r.run_id) ?? [], open))
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
    const open = yield* personalOpener([
      message?.content,
      row.reply,
      approvalOutputOf(row),
      ...approvals.flatMap((a: Row) => [a.input_preview, a.note]),
      ...questions.flatMap((q: Row) => [q.question, q.answer, ...q.options])
    ])
    const transcript: Transcript = {
      ...threadRunOf(row, approvals.map((a) => approvalOf(a, now, open)), open),
      userId: row.user_id,
      userMessage: message === undefined
        ? null
        : { messageId: message.message_id, ...openedText(open, message.content), attachments: message.attachments, createdAt: iso(message.created_at) },
      reply: row.reply === null ? null : open.text(row.reply) ?? "",
      approvalId: row.approval_public_id,
      carriedSummary: row.carried_summary,
      durationMs: row.ended_at === null ? null : (row.ended_at as Date).getTime() - (row.started_at as Date).getTime(),
      questions: questions.map((q: Row) => ({
        questionId: q.question_id,
        // the question, its options and the answer are sealed under the asking person's key (docs/audit.md): "" once erased
        question: open.text(q.question) ?? "",
        options: q.options.flatMap((option: string) => open.text(option) ?? []),
        status: q.status,
        answer: q.answer === null ? null : open.text(q.answer) ?? "",
        reason: q.reason,
        askedAt: iso(q.asked_at),
        endedAt: isoOrNull(q.ended_at)
      }))
    }
    return transcript
  })

// ---------------------------------------------------------------------------------------------
// the approvals inbox

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
    // each call's preview is sealed under its asking person's key (docs/audit.md)
    const open = yield* personalOpener(page.map((a) => a.input_preview))
    return {
      approvals: page.map((a) => {
        const own = isOwn({ userId: a.user_id as string }, userId)
        return {
          approvalId: a.public_id,
          capability: a.capability,
          inputPreview: open.text(a.input_preview) ?? "",
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

// ---------------------------------------------------------------------------------------------
// workspace agents

const isoOf = (value: Date | string) => (value instanceof Date ? value.toISOString() : value)

const agentOf = (row: Row): WorkspaceAgent => ({
  slug: row.slug,
  name: row.name,
  description: row.description,
  instructions: row.instructions,
  tier: row.tier,
  tools: row.tools,
  skills: row.skills,
  builtIn: false,
  version: row.version,
  createdAt: isoOf(row.created_at),
  updatedAt: isoOf(row.updated_at)
})

/** The workspace's agents of the `agents` read model (or the one with this slug), by slug. */
export const agentRows = (workspaceId: string, slug: string | undefined) =>
  Effect.flatMap(Db, (db) =>
    query("read agents", () => db.sql`
      select slug, name, description, instructions, tier, tools, skills, version, created_at, updated_at from ${db.table("agents")}
      where workspace_id = ${workspaceId} ${slug === undefined ? db.sql`` : db.sql`and slug = ${slug}`}
      order by slug`)
  ).pipe(Effect.map((rows) => rows.map(agentOf)))

/** The workspace's skills of the `skills` read model (those of `slugs` when given), by slug, at their current versions. */
export const skillRows = (workspaceId: string, slugs: ReadonlyArray<string> | undefined) =>
  Effect.flatMap(Db, (db) =>
    query("read skills", () => db.sql`
      select slug, name, description, instructions, version, created_at, updated_at from ${db.table("skills")}
      where workspace_id = ${workspaceId} ${slugs === undefined ? db.sql`` : db.sql`and slug = any(${slugs as Array<string>})`}
      order by slug`)
  ).pipe(
    Effect.map((rows) =>
      rows.map((row): typeof Skill.Type => ({
        slug: row.slug,
        name: row.name,
        description: row.description,
        instructions: row.instructions,
        version: row.version,
        createdAt: isoOf(row.created_at),
        updatedAt: isoOf(row.updated_at)
      }))
    )
  )

// ---------------------------------------------------------------------------------------------
// model tiers and keys

/** An organization's model tier as its row has it. */
export interface ModelTierRow {
  readonly slug: string
  /** `<family>:<model>`, or null when the tier names no model yet. */
  readonly model: string | null
  readonly sharedKey: boolean
  readonly archived: boolean
}

const tierOf = (row: Row): ModelTierRow => ({ slug: row.slug, model: row.model, sharedKey: row.shared_key, archived: row.archived })

/** The organization's model tiers (archived ones too), by slug. */
export const modelTiersOf = (orgId: string) =>
  Effect.flatMap(Db, (db) =>
    query("model tiers", () => db.sql`
      select slug, model, shared_key, archived, is_default from ${db.table("model_tiers")} where org_id = ${orgId} order by slug`)
  ).pipe(Effect.map((rows) => rows.map((row) => ({ ...tierOf(row), isDefault: row.is_default as boolean }))))

/** The organization's model keys as listings show them (never the keys themselves), by family. */
export const modelKeysOf = (orgId: string) =>
  Effect.flatMap(Db, (db) =>
    query("model keys", () => db.sql`
      select family, key_hint, base_url, models, set_at from ${db.table("model_keys")} where org_id = ${orgId} order by family`)
  ).pipe(
    Effect.map((rows) =>
      rows.map((row) => ({
        family: row.family,
        keyHint: row.key_hint as string | null,
        baseUrl: row.base_url as string | null,
        models: row.models as ReadonlyArray<string> | null,
        setAt: isoOf(row.set_at)
      }))
    )
  )

/** The organization's tier with this slug, if it has one. */
export const modelTier = (orgId: string, slug: string) =>
  Effect.flatMap(Db, (db) =>
    query("model tier", () => db.sql`
      select slug, model, shared_key, archived from ${db.table("model_tiers")} where org_id = ${orgId} and slug = ${slug}`)
  ).pipe(Effect.map((rows): ModelTierRow | undefined => (rows[0] === undefined ? undefined : tierOf(rows[0]))))

/** The organization's default tier, if it set one. */
export const defaultModelTier = (orgId: string) =>
  Effect.flatMap(Db, (db) =>
    query("default model tier", () => db.sql`
      select slug, model, shared_key, archived from ${db.table("model_tiers")} where org_id = ${orgId} and is_default`)
  ).pipe(Effect.map((rows): ModelTierRow | undefined => (rows[0] === undefined ? undefined : tierOf(rows[0]))))

/** The organization's own model keys, still sealed, with what each may run. */
export const sealedModelKeys = (orgId: string) =>
  Effect.flatMap(Db, (db) =>
    query("model keys", () => db.sql`
      select family, api_key_sealed, base_url, models from ${db.table("model_keys")} where org_id = ${orgId}`)
  ).pipe(
    Effect.map((rows) =>
      rows.map((row) => ({
        family: row.family as string,
        apiKeySealed: row.api_key_sealed as string,
        baseUrl: row.base_url as string | null,
        models: row.models as Array<string> | null
      }))
    )
  )

// ---------------------------------------------------------------------------------------------
// uploaded files and their bytes

/** Creates `<schema>.file_contents` if missing (the migrator serves only the read-model schema);
 * answers the table as an escaped identifier. */
export const createFileContentsTable = (schema: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const table = db.sql(`${schema}.file_contents`)
    yield* query(`create ${schema}.file_contents`, () =>
      db.sql.begin(async (tx) => {
        // nodes starting together would collide in the catalog even with `if not exists`
        await tx`select pg_advisory_xact_lock(hashtext(${`svc-files:${schema}`}))`
        await tx.unsafe(`create schema if not exists ${schema}`)
        // stored_at: bytes whose upload failed after they were written are named by no `files`
        // row; their age tells them from an upload still under way
        await tx`create table if not exists ${table} (
          file_id text primary key,
          bytes bytea not null,
          stored_at timestamptz not null default now())`
      })
    )
    return table
  })

/** Writes files' bytes into `table` (`file_contents`); a file id already there keeps its bytes. */
export const storeFileContents = (table: postgres.Helper<string>, files: ReadonlyArray<{ readonly fileId: string; readonly bytes: Uint8Array }>) =>
  Effect.flatMap(Db, (db) =>
    query("store file contents", () =>
      db.sql.begin(async (tx) => {
        // a statement per file: its size is bounded by one file's, however many the upload holds
        for (const file of files) {
          await tx`insert into ${table} (file_id, bytes) values (${file.fileId}, ${file.bytes}) on conflict (file_id) do nothing`
        }
      })
    )
  )

/** The workspace's uploaded files among `ids` (in no order). */
export const fileRows = (workspaceId: string, ids: ReadonlyArray<string>) =>
  Effect.flatMap(Db, (db) =>
    query("find attachments", () => db.sql`
    select file_id, org_id, workspace_id, user_id, name, media_type, size, sha256, uploaded_at from ${db.table("files")}
    where workspace_id = ${workspaceId} and file_id = any(${ids as Array<string>}::text[])`)
  ).pipe(
    Effect.map((rows) =>
      rows.map((r): FileRow => ({
        id: r.file_id,
        orgId: r.org_id,
        workspaceId: r.workspace_id,
        userId: r.user_id,
        name: r.name,
        mediaType: r.media_type,
        size: r.size,
        sha256: r.sha256,
        uploadedAt: (r.uploaded_at as Date).toISOString()
      }))
    )
  )

/** The workspace's uploaded files among `ids` (in no order) with their bytes from `table`; null bytes: gone. */
export const fileContentRows = (table: postgres.Helper<string>, workspaceId: string, ids: ReadonlyArray<string>) =>
  Effect.flatMap(Db, (db) =>
    query("read attachments", () => db.sql`
    select f.file_id, f.name, f.media_type, c.bytes from ${db.table("files")} f
    left join ${table} c on c.file_id = f.file_id
    where f.workspace_id = ${workspaceId} and f.file_id = any(${ids as Array<string>}::text[])`)
  ).pipe(
    Effect.map((rows) =>
      rows.map((r) => ({ id: r.file_id as string, name: r.name as string, mediaType: r.media_type as string, bytes: r.bytes as Uint8Array | null }))
    )
  )
