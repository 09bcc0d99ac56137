import { type A2aMessage, type A2aTaskEvent, isTerminal } from "./events.ts"
import type { A2aTaskState, Task } from "./state.ts"

/** The agent's status message of a failed or rejected task. Its id follows from the task, so a
 * replay rebuilds the same message; a task fails or is rejected once, so the id is unique in it. */
const endNote = (task: Task, ending: "failed" | "rejected", text: string): A2aMessage => ({
  kind: "message",
  role: "agent",
  parts: [{ kind: "text", text }],
  messageId: `${task.taskId}-${ending}`,
  taskId: task.taskId,
  contextId: task.contextId
})

// The decider submits only an absent task and changes no terminal one; a log that says otherwise is corrupt.
export const evolve = (state: A2aTaskState, event: A2aTaskEvent): A2aTaskState => {
  if (event._tag === "a2a.task.submitted") {
    if (state._tag !== "Absent") throw new Error(`a2a.task.submitted for task ${event.taskId}, which exists`)
    const { _tag, message, submittedAt, ...task } = event
    return {
      _tag: "Task",
      ...task,
      runId: null,
      state: "submitted",
      statusMessage: null,
      history: [message],
      artifacts: [],
      pendingQuestionId: null,
      createdAt: submittedAt,
      updatedAt: submittedAt
    }
  }
  if (state._tag === "Absent") throw new Error(`${event._tag} for task ${event.taskId}, which was never submitted`)
  if (isTerminal(state.state)) throw new Error(`${event._tag} for task ${event.taskId}, which is ${state.state}`)
  return apply(state, event)
}

const apply = (task: Task, event: Exclude<A2aTaskEvent, { readonly _tag: "a2a.task.submitted" }>): Task => {
  const updatedAt = event.at
  switch (event._tag) {
    case "a2a.task.working":
      return { ...task, state: "working", runId: event.runId, statusMessage: null, pendingQuestionId: null, updatedAt }
    case "a2a.task.input_required":
      return {
        ...task,
        state: "input-required",
        statusMessage: event.agentMessage,
        history: [...task.history, event.agentMessage],
        pendingQuestionId: event.questionId,
        updatedAt
      }
    case "a2a.task.message_received":
      return { ...task, state: "working", statusMessage: null, history: [...task.history, event.message], pendingQuestionId: null, updatedAt }
    case "a2a.task.completed":
      return {
        ...task,
        state: "completed",
        statusMessage: event.agentMessage,
        history: [...task.history, event.agentMessage],
        artifacts: [event.artifact],
        pendingQuestionId: null,
        updatedAt
      }
    case "a2a.task.failed":
      return { ...task, state: "failed", statusMessage: endNote(task, "failed", event.error.message), pendingQuestionId: null, updatedAt }
    case "a2a.task.rejected":
      return { ...task, state: "rejected", statusMessage: endNote(task, "rejected", event.reason), pendingQuestionId: null, updatedAt }
    case "a2a.task.canceled":
      return { ...task, state: "canceled", statusMessage: null, pendingQuestionId: null, updatedAt }
  }
}
