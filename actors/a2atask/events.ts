/**
 * Events of the A2A task actor (key `a2atask:<taskId>`): one A2A v0.3 task, the durable handle of a
 * workspace-assistant turn asked over the JSON-RPC endpoint (docs/a2a.md). Messages and artifacts
 * are kept in their A2A wire shape, so a read of the task returns them as they are. Each event
 * repeats the command's time, because `evolve` sees only the event. A published `_tag` is never renamed.
 */
import { Schema } from "effect"
import { Json } from "../kernel.ts"

export const TASK_ID = /^a2a_[0-9a-f]{32}$/
export const CONTEXT_ID = /^ctx_[0-9a-f]{32}$/

/** `a2a_<32 hex>`. */
export const TaskId = Schema.String.pipe(Schema.pattern(TASK_ID))
/** `ctx_<32 hex>`. */
export const ContextId = Schema.String.pipe(Schema.pattern(CONTEXT_ID))

/**
 * The states this actor records. A2A also names `auth-required` and `unknown`; no transition here
 * leads into them.
 */
export const TaskState = Schema.Literal("submitted", "working", "input-required", "completed", "canceled", "failed", "rejected")
export type TaskState = typeof TaskState.Type

/** Terminal states: nothing changes a task in one of them. */
export const isTerminal = (state: TaskState): boolean => state === "completed" || state === "canceled" || state === "failed" || state === "rejected"

export const TextPart = Schema.Struct({ kind: Schema.Literal("text"), text: Schema.String })
export type TextPart = typeof TextPart.Type

export const DataPart = Schema.Struct({ kind: Schema.Literal("data"), data: Schema.Record({ key: Schema.String, value: Json }) })

/**
 * A file part as kept: its name and type as sent; its bytes are an attachment's (never in the log),
 * which `uri` names: `urn:svc:attachment:<gen_ id>`.
 */
export const FilePart = Schema.Struct({
  kind: Schema.Literal("file"),
  file: Schema.Struct({ name: Schema.optional(Schema.String), mimeType: Schema.optional(Schema.String), uri: Schema.String })
})

/** A message's part: its kind and content as sent (A2A v0.3 text, data or file); a part's metadata is not kept. */
export const Part = Schema.Union(TextPart, DataPart, FilePart)
export type Part = typeof Part.Type

/** What a command says of a message; the decider makes it an A2A message of this task. */
export const MessageContent = Schema.Struct({
  /** The caller's id for a user message; one the turn mints for an agent message. */
  messageId: Schema.NonEmptyString,
  parts: Schema.Array(Part)
})
export type MessageContent = typeof MessageContent.Type

/** An A2A message as stored and returned: its task and context always filled in. */
export const A2aMessage = Schema.Struct({
  kind: Schema.Literal("message"),
  role: Schema.Literal("user", "agent"),
  parts: Schema.Array(Part),
  messageId: Schema.NonEmptyString,
  taskId: TaskId,
  contextId: ContextId
})
export type A2aMessage = typeof A2aMessage.Type

export const Artifact = Schema.Struct({
  artifactId: Schema.NonEmptyString,
  /** e.g. `response`. */
  name: Schema.String,
  parts: Schema.Array(TextPart)
})
export type Artifact = typeof Artifact.Type

export const TaskFailure = Schema.Struct({
  /** The turn's error code; null for an error without a stable code. */
  code: Schema.NullOr(Schema.String),
  message: Schema.String
})

/** What a task is, fixed when it is submitted: the submit command, its event and the state share it. */
export const TaskHeader = {
  taskId: TaskId,
  contextId: ContextId,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  /** The person behind the caller (for an API key, the key's creator): the only one who may continue it. */
  userId: Schema.NonEmptyString,
  apiKeyId: Schema.NullOr(Schema.NonEmptyString),
  /** The conversation the turn runs in (its `cnv_` public id or UUID, as the gateway names it). */
  conversationId: Schema.NonEmptyString,
  turnId: Schema.UUID
}

export class TaskSubmitted extends Schema.TaggedClass<TaskSubmitted>()("a2a.task.submitted", {
  ...TaskHeader,
  /** The caller's first message. */
  message: A2aMessage,
  submittedAt: Schema.String
}) {}

/** The task works under its run: from its submission, or again after its question timed out (or, in
 * an older log, once the run started). */
export class TaskWorking extends Schema.TaggedClass<TaskWorking>()("a2a.task.working", {
  taskId: TaskId,
  runId: Schema.NonEmptyString,
  at: Schema.String
}) {}

/** The agent asked the caller a question: `agentMessage` is the question. */
export class TaskInputRequired extends Schema.TaggedClass<TaskInputRequired>()("a2a.task.input_required", {
  taskId: TaskId,
  /** The conversation's question the caller's next message answers. */
  questionId: Schema.NonEmptyString,
  agentMessage: A2aMessage,
  at: Schema.String
}) {}

/** The caller's next message on an input-required task: the answer to question `questionId`. */
export class TaskMessageReceived extends Schema.TaggedClass<TaskMessageReceived>()("a2a.task.message_received", {
  taskId: TaskId,
  questionId: Schema.NonEmptyString,
  message: A2aMessage,
  at: Schema.String
}) {}

export class TaskCompleted extends Schema.TaggedClass<TaskCompleted>()("a2a.task.completed", {
  taskId: TaskId,
  /** The reply. */
  agentMessage: A2aMessage,
  /** The reply as the task's one artifact. */
  artifact: Artifact,
  at: Schema.String
}) {}

export class TaskFailed extends Schema.TaggedClass<TaskFailed>()("a2a.task.failed", {
  taskId: TaskId,
  error: TaskFailure,
  at: Schema.String
}) {}

/** The turn could not start (e.g. its context names no conversation of the workspace). */
export class TaskRejected extends Schema.TaggedClass<TaskRejected>()("a2a.task.rejected", {
  taskId: TaskId,
  reason: Schema.String,
  at: Schema.String
}) {}

export class TaskCanceled extends Schema.TaggedClass<TaskCanceled>()("a2a.task.canceled", {
  taskId: TaskId,
  at: Schema.String
}) {}

export const A2aTaskEvent = Schema.Union(
  TaskSubmitted,
  TaskWorking,
  TaskInputRequired,
  TaskMessageReceived,
  TaskCompleted,
  TaskFailed,
  TaskRejected,
  TaskCanceled
)
export type A2aTaskEvent = typeof A2aTaskEvent.Type
