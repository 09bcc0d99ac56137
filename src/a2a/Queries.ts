/**
 * The a2a wing's SQL: its read model of A2A tasks (migration 0011, projected by the a2atask actor),
 * and the A2A v0.3 `Task` a row is returned as. A malformed task id is simply not found, never a SQL error;
 * a task is found within its workspace only. `readTask` answers from the task actor's state instead
 * when this node owns it and holds every write the call must see; the row and the state have the
 * same fields, so one function (`taskView`) makes the wire Task of either, its sealed words opened.
 */
import { Effect } from "effect"
import { A2aTaskActor } from "../../actors/a2atask/actor.ts"
import { type A2aMessage, type Artifact, type Part, TASK_ID, type TaskState } from "../../actors/a2atask/events.ts"
import { type PersonalDataError, type PersonalOpener, personalOpener } from "../audit/PersonalData.ts"
import type { KeyManagement } from "../marketplace/Envelope.ts"
import { type ActorHost, peekFenced } from "../../streams/ActorHost.ts"
import { Db, type DbError, query, queryFirst } from "../../streams/Db.ts"
import type { Part as WirePart, Task, TaskState as WireTaskState } from "../platform/Wire.ts"

export interface TaskRecord {
  readonly taskId: string
  readonly contextId: string
  readonly orgId: string
  readonly workspaceId: string
  /** The person behind the caller: the only one who may continue it. */
  readonly userId: string
  readonly apiKeyId: string | null
  /** The turn's conversation, `cnv_` public id or UUID. */
  readonly conversationId: string
  /** The turn's id (UUID). */
  readonly turnId: string
  /** Null until the turn's run starts. */
  readonly runId: string | null
  readonly state: TaskState
  readonly statusMessage: A2aMessage | null
  readonly history: ReadonlyArray<A2aMessage>
  readonly artifacts: ReadonlyArray<Artifact>
  /** While input-required: the conversation's question the caller's next message answers. */
  readonly pendingQuestionId: string | null
  /** ISO 8601. */
  readonly createdAt: string
  /** ISO 8601: when the status last changed. */
  readonly updatedAt: string
}

const TASK_COLUMNS = [
  "task_id", "context_id", "org_id", "workspace_id", "user_id", "api_key_id", "conversation_id", "turn_id", "run_id", "state",
  "status_message", "history", "artifacts", "pending_question_id", "created_at", "updated_at"
]

const recordOf = (row: any): TaskRecord => ({
  taskId: row.task_id,
  contextId: row.context_id,
  orgId: row.org_id,
  workspaceId: row.workspace_id,
  userId: row.user_id,
  apiKeyId: row.api_key_id,
  conversationId: row.conversation_id,
  turnId: row.turn_id,
  runId: row.run_id,
  state: row.state,
  statusMessage: row.status_message,
  history: row.history,
  artifacts: row.artifacts,
  pendingQuestionId: row.pending_question_id,
  createdAt: (row.created_at as Date).toISOString(),
  updatedAt: (row.updated_at as Date).toISOString()
})

export const findTask = (workspaceId: string, taskId: string): Effect.Effect<TaskRecord | undefined, DbError, Db> =>
  Effect.gen(function* () {
    if (!TASK_ID.test(taskId)) return undefined
    const db = yield* Db
    return yield* queryFirst("find a2a task", () => db.sql`
      select ${db.sql(TASK_COLUMNS)}
      from ${db.table("a2a_tasks")}
      where workspace_id = ${workspaceId} and task_id = ${taskId}`, recordOf)
  })

/** Where a page of a person's tasks ends: its last task's status time and id (newest first, ties by id). */
export interface TaskCursor {
  readonly updatedAt: string
  readonly taskId: string
}

export interface TaskFilter {
  readonly contextId?: string
  readonly state?: WireTaskState
  /** ISO 8601: only tasks whose status changed after it. */
  readonly updatedAfter?: string
}

/**
 * One page of a person's tasks in a workspace, newest status first, after `cursor`; `total` counts
 * every task the filter matches, on every page.
 */
export const listOwnTasks = (
  workspaceId: string,
  userId: string,
  filter: TaskFilter,
  cursor: TaskCursor | undefined,
  limit: number
): Effect.Effect<{ readonly tasks: ReadonlyArray<TaskRecord>; readonly total: number }, DbError, Db> =>
  Effect.gen(function* () {
    const db = yield* Db
    const none = db.sql``
    const rows = yield* query("list a2a tasks", () => db.sql`
      select * from (
        select ${db.sql(TASK_COLUMNS)}, count(*) over () as total
        from ${db.table("a2a_tasks")}
        where workspace_id = ${workspaceId} and user_id = ${userId}
          ${filter.contextId === undefined ? none : db.sql`and context_id = ${filter.contextId}`}
          ${filter.state === undefined ? none : db.sql`and state = ${filter.state}`}
          ${filter.updatedAfter === undefined ? none : db.sql`and updated_at > ${filter.updatedAfter}`}
      ) matching
      ${cursor === undefined ? none : db.sql`where (updated_at, task_id) < (${cursor.updatedAt}::timestamptz, ${cursor.taskId})`}
      order by updated_at desc, task_id desc
      limit ${limit + 1}`)
    // one row past the page tells whether another follows; total is the same on every row
    return { tasks: rows.map(recordOf), total: rows.length === 0 ? 0 : Number(rows[0].total) }
  })

/**
 * A task of the workspace: its actor's state when this node owns the task's partition and its
 * cache holds the task and every write the call must see (`ActorHost.peek`): no statement;
 * otherwise its row, in one statement, once the read model holds those writes (`findTask`).
 */
export const readTask = (workspaceId: string, taskId: string): Effect.Effect<TaskRecord | undefined, DbError, Db | ActorHost> => {
  if (!TASK_ID.test(taskId)) return Effect.succeed(undefined)
  return Effect.flatMap(peekFenced(A2aTaskActor, taskId), (cached): Effect.Effect<TaskRecord | undefined, DbError, Db> => {
    if (cached === undefined) return findTask(workspaceId, taskId)
    // cached and absent: never submitted (the cache is loaded from the projected state, then kept by the appends)
    return Effect.succeed(cached._tag === "Task" && cached.workspaceId === workspaceId ? cached : undefined)
  })
}

/** A kept message's or artifact's parts opened: a text erased reads "" (its part says so in its metadata), a data member erased reads null. */
const openParts = (open: PersonalOpener, parts: ReadonlyArray<Part>): Array<WirePart> =>
  parts.map((part): WirePart => {
    if (part.kind === "text") {
      const text = open.text(part.text)
      return text === null ? { kind: "text", text: "", metadata: { erased: true } } : { kind: "text", text }
    }
    if (part.kind === "data") return { kind: "data", data: Object.fromEntries(Object.entries(part.data).map(([name, value]) => [name, open.json(value)])) }
    return part
  })

const partsOf = (task: TaskRecord): ReadonlyArray<Part> => [
  ...(task.statusMessage?.parts ?? []),
  ...task.history.flatMap((message) => message.parts),
  ...task.artifacts.flatMap((artifact) => artifact.parts)
]

/**
 * The task as A2A returns it, its person's words opened with their key (actors/personal.ts);
 * `historyLength` keeps the last N messages of its history (0: none; absent: all).
 */
export const taskView = (task: TaskRecord, historyLength?: number): Effect.Effect<Task, DbError | PersonalDataError, Db | KeyManagement> =>
  Effect.map(personalOpener(partsOf(task).flatMap((part) => (part.kind === "text" ? [part.text] : part.kind === "data" ? Object.values(part.data) : []))), (open) => {
    const message = (kept: A2aMessage) => ({ ...kept, parts: openParts(open, kept.parts) })
    const history = historyLength === undefined ? task.history : historyLength <= 0 ? [] : task.history.slice(-historyLength)
    return {
      kind: "task",
      id: task.taskId,
      contextId: task.contextId,
      status: {
        state: task.state,
        timestamp: task.updatedAt,
        ...(task.statusMessage === null ? {} : { message: message(task.statusMessage) })
      },
      artifacts: task.artifacts.map((artifact) => ({ ...artifact, parts: openParts(open, artifact.parts) })),
      history: history.map(message)
    }
  })
