import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { type A2aTaskError, TaskAlreadyExists, TaskNotAwaitingInput, TaskNotCancelable, TaskNotFound, TaskTerminal } from "./errors.ts"
import {
  type A2aMessage,
  type A2aTaskEvent,
  isTerminal,
  type MessageContent,
  TaskCanceled,
  TaskCompleted,
  TaskFailed,
  TaskInputRequired,
  TaskMessageReceived,
  TaskRejected,
  TaskSubmitted,
  TaskWorking
} from "./events.ts"
import type { A2aTaskCommand } from "./protocol.ts"
import type { A2aTaskState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<A2aTaskEvent>, A2aTaskError>

const nothing: Decision = Either.right([])

const messageOf = (
  task: { readonly taskId: string; readonly contextId: string },
  role: A2aMessage["role"],
  content: MessageContent
): A2aMessage => ({
  kind: "message",
  role,
  parts: content.parts,
  messageId: content.messageId,
  taskId: task.taskId,
  contextId: task.contextId
})

export const decide = (state: A2aTaskState, command: A2aTaskCommand, meta: CommandMeta): Decision => {
  if (command._tag === "SubmitTask") {
    if (state._tag !== "Absent") return Either.left(new TaskAlreadyExists({ taskId: command.taskId }))
    const { _tag, message, runId, ...task } = command
    // submitted and working in one decision: the log keeps both steps of the A2A lifecycle
    return Either.right([
      new TaskSubmitted({ ...task, message: messageOf(command, "user", message), submittedAt: meta.at }),
      new TaskWorking({ taskId: task.taskId, runId, at: meta.at })
    ])
  }
  const { taskId } = command
  if (state._tag === "Absent") return Either.left(new TaskNotFound({ taskId }))
  const at = meta.at
  switch (command._tag) {
    case "ReceiveMessage":
      // another person's task is not theirs to know of
      if (command.userId !== state.userId) return Either.left(new TaskNotFound({ taskId }))
      if (isTerminal(state.state)) return Either.left(new TaskTerminal({ taskId, state: state.state }))
      // a pending question is what an input-required task waits on
      if (state.pendingQuestionId === null) return Either.left(new TaskNotAwaitingInput({ taskId, state: state.state }))
      return Either.right([new TaskMessageReceived({ taskId, questionId: state.pendingQuestionId, message: messageOf(state, "user", command.message), at })])
    case "CancelTask":
      if (command.workspaceId !== state.workspaceId) return Either.left(new TaskNotFound({ taskId }))
      if (isTerminal(state.state)) return Either.left(new TaskNotCancelable({ taskId, state: state.state }))
      return Either.right([new TaskCanceled({ taskId, at })])
  }
  // the rest are the turn's reports: one that comes after a cancel (or a second ending) changes nothing
  if (isTerminal(state.state)) return nothing
  switch (command._tag) {
    case "MarkWorking":
      // a caller's answer already moved the task back to working before the turn said it resumed
      if (state.state === "working") return nothing
      return Either.right([new TaskWorking({ taskId, runId: command.runId, at })])
    case "RequireInput":
      // the same question reported again
      if (state.pendingQuestionId === command.questionId) return nothing
      return Either.right([new TaskInputRequired({ taskId, questionId: command.questionId, agentMessage: messageOf(state, "agent", command.agentMessage), at })])
    case "CompleteTask":
      return Either.right([new TaskCompleted({ taskId, agentMessage: messageOf(state, "agent", command.agentMessage), artifact: command.artifact, at })])
    case "FailTask":
      return Either.right([new TaskFailed({ taskId, error: command.error, at })])
    case "RejectTask":
      return Either.right([new TaskRejected({ taskId, reason: command.reason, at })])
  }
}
