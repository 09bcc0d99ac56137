/** Rejections of the A2A task actor, stated through the gateway's error table; the JSON-RPC
 * endpoint answers `TaskNotFound` with -32001 and `TaskNotCancelable` with -32002 (spec 7.4). */
import { Schema } from "effect"
import { TaskState } from "./events.ts"

/** No such task, or one of another workspace or (for a message) of another person: the caller
 * learns nothing of a task that is not theirs. */
export class TaskNotFound extends Schema.TaggedError<TaskNotFound>()("TaskNotFound", {
  taskId: Schema.String
}) {
  override get message() {
    return `no task ${this.taskId}`
  }
}

/** A task id is submitted once: the same submission retried is the same command, which the host
 * answers without deciding again, so this is another submission under an id already taken. */
export class TaskAlreadyExists extends Schema.TaggedError<TaskAlreadyExists>()("TaskAlreadyExists", {
  taskId: Schema.String
}) {
  override get message() {
    return `task ${this.taskId} already exists`
  }
}

/** A cancel of a task that already ended. */
export class TaskNotCancelable extends Schema.TaggedError<TaskNotCancelable>()("TaskNotCancelable", {
  taskId: Schema.String,
  state: TaskState
}) {
  override get message() {
    return `task ${this.taskId} is ${this.state} and can no longer be canceled`
  }
}

/** A follow of a task that already ended, where the version refuses one (1.0's SubscribeToTask, spec 3.1.6). */
export class TaskNotSubscribable extends Schema.TaggedError<TaskNotSubscribable>()("TaskNotSubscribable", {
  taskId: Schema.String,
  state: TaskState
}) {
  override get message() {
    return `task ${this.taskId} is ${this.state}; only a task that has not ended can be subscribed to`
  }
}

/** A message for a task that already ended. */
export class TaskTerminal extends Schema.TaggedError<TaskTerminal>()("TaskTerminal", {
  taskId: Schema.String,
  state: TaskState
}) {
  override get message() {
    return `task ${this.taskId} is ${this.state} and takes no more messages`
  }
}

/** A message for a running task that asked no question. */
export class TaskNotAwaitingInput extends Schema.TaggedError<TaskNotAwaitingInput>()("TaskNotAwaitingInput", {
  taskId: Schema.String,
  state: TaskState
}) {
  override get message() {
    return `task ${this.taskId} is ${this.state}, not waiting for input`
  }
}

export const A2aTaskError = Schema.Union(TaskNotFound, TaskAlreadyExists, TaskNotCancelable, TaskTerminal, TaskNotAwaitingInput)
export type A2aTaskError = typeof A2aTaskError.Type
