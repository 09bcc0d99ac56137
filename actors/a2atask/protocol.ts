/** Commands of the A2A task actor. The gateway mints the task, context and turn ids and checks the
 * caller before it submits; the turn reports its progress. A command's message is its content
 * only: the decider makes it an A2A message of this task (kind, role, task and context ids). Time
 * comes from the command's metadata. */
import { Schema } from "effect"
import { Artifact, MessageContent, TaskFailure, TaskHeader, TaskId } from "./events.ts"

/** A new task, from the caller's first message, working from the start: its turn starts at once,
 * under the run id minted with it. */
export class SubmitTask extends Schema.TaggedClass<SubmitTask>()("SubmitTask", {
  ...TaskHeader,
  runId: Schema.NonEmptyString,
  message: MessageContent
}) {}

/** The turn's run resumed after its question timed out. */
export class MarkWorking extends Schema.TaggedClass<MarkWorking>()("MarkWorking", {
  taskId: TaskId,
  runId: Schema.NonEmptyString
}) {}

/** The agent asked question `questionId` of the caller. */
export class RequireInput extends Schema.TaggedClass<RequireInput>()("RequireInput", {
  taskId: TaskId,
  questionId: Schema.NonEmptyString,
  agentMessage: MessageContent
}) {}

/** The caller's next message, answering the pending question; only the task's person may send it. */
export class ReceiveMessage extends Schema.TaggedClass<ReceiveMessage>()("ReceiveMessage", {
  taskId: TaskId,
  message: MessageContent,
  /** The caller's person; empty for a caller with none, which matches no task. */
  userId: Schema.String
}) {}

export class CompleteTask extends Schema.TaggedClass<CompleteTask>()("CompleteTask", {
  taskId: TaskId,
  agentMessage: MessageContent,
  artifact: Artifact
}) {}

export class FailTask extends Schema.TaggedClass<FailTask>()("FailTask", {
  taskId: TaskId,
  error: TaskFailure
}) {}

/** The turn could not start. */
export class RejectTask extends Schema.TaggedClass<RejectTask>()("RejectTask", {
  taskId: TaskId,
  reason: Schema.String
}) {}

/** tasks/cancel, scoped to the caller's workspace. */
export class CancelTask extends Schema.TaggedClass<CancelTask>()("CancelTask", {
  taskId: TaskId,
  workspaceId: Schema.NonEmptyString
}) {}

export const A2aTaskCommand = Schema.Union(SubmitTask, MarkWorking, RequireInput, ReceiveMessage, CompleteTask, FailTask, RejectTask, CancelTask)
export type A2aTaskCommand = typeof A2aTaskCommand.Type
