/** A task is absent until it is submitted; then it keeps everything its read-model row holds: the
 * projection writes the full row from it. */
import { Schema } from "effect"
import { A2aMessage, Artifact, TaskHeader, TaskState } from "./events.ts"

export const Task = Schema.TaggedStruct("Task", {
  ...TaskHeader,
  /** Set once the turn's run starts. */
  runId: Schema.NullOr(Schema.NonEmptyString),
  state: TaskState,
  /** A2A `status.message`: the pending question, the reply, or the failure or rejection. */
  statusMessage: Schema.NullOr(A2aMessage),
  /** The caller's messages and the agent's questions and reply, oldest first. */
  history: Schema.Array(A2aMessage),
  artifacts: Schema.Array(Artifact),
  /** Set while input-required: the conversation's question the caller's next message answers. */
  pendingQuestionId: Schema.NullOr(Schema.NonEmptyString),
  createdAt: Schema.String,
  /** When the status last changed (A2A `status.timestamp`). */
  updatedAt: Schema.String
})
export type Task = typeof Task.Type

export const A2aTaskState = Schema.Union(Schema.TaggedStruct("Absent", {}), Task)
export type A2aTaskState = typeof A2aTaskState.Type

export const initialA2aTaskState: A2aTaskState = { _tag: "Absent" }
