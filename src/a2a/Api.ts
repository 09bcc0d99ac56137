/**
 * The a2a wing's contracts: the A2A methods as capabilities on their own surface, `a2a`, for the
 * roles that may ask the workspace's assistant.
 */
import { Schema } from "effect"
import { askers } from "../assistant/Api.ts"
import { defineContract } from "../checkpoint/Capability.ts"
import { EmptyParams, MessageSendParams, TaskIdParams, TaskQueryParams } from "./Protocol.ts"
import { Task } from "../platform/Wire.ts"
import { ListTasksParams } from "./V1.ts"


const common = {
  scope: "workspace",
  surfaces: ["a2a"],
  roles: askers,
  claimedBy: "builtin",
  destructive: false,
  needsApproval: false
} as const

export const sendMessage = defineContract({
  ...common,
  name: "a2a.message.send",
  description: "Send a message to the workspace agent (A2A message/send): a new task (message.metadata.agentSlug names a workspace agent; the assistant without it), a message continuing a context, or the answer to a task waiting for input. Answers with the task once it settles, or once it is submitted when not blocking.",
  input: MessageSendParams,
  output: Task,
  sensitivity: "medium",
  mutating: true,
  changesAccess: false
})

export const streamMessage = defineContract({
  ...common,
  name: "a2a.message.stream",
  description: "Send a message to the workspace agent and follow its task as it runs (A2A message/stream): the Task as submitted, then its status and artifact updates until it settles.",
  input: MessageSendParams,
  // the started task stays in the process; the gateway frames its updates
  output: Schema.Unknown,
  sensitivity: "medium",
  mutating: true,
  changesAccess: false
})

export const getTask = defineContract({
  ...common,
  name: "a2a.tasks.get",
  description: "Read one of your tasks (A2A tasks/get); historyLength keeps the last N messages of its history.",
  input: TaskQueryParams,
  output: Task,
  sensitivity: "low",
  mutating: false
})

export const listTasks = defineContract({
  ...common,
  name: "a2a.tasks.list",
  description: "List your tasks in this workspace, newest status first (A2A 1.0 ListTasks): filtered by context, state or status time, a page at a time with a cursor.",
  input: ListTasksParams,
  // 0.3 tasks, which the 1.0 mapping (src/a2a/V1.ts) turns into 1.0's
  output: Schema.Unknown,
  sensitivity: "low",
  mutating: false
})

export const resubscribe = defineContract({
  ...common,
  name: "a2a.tasks.resubscribe",
  description: "Follow one of your tasks again (A2A tasks/resubscribe): its status updates until it settles.",
  input: Schema.Struct({
    ...TaskQueryParams.fields,
    /** Set by 1.0's SubscribeToTask, which follows only a task that has not ended (spec 3.1.6); 0.3's answers an ended one and closes. */
    refuseEnded: Schema.optional(Schema.Boolean)
  }),
  // the follower stays in the process; the gateway frames its updates
  output: Schema.Unknown,
  sensitivity: "low",
  mutating: false
})

export const cancelTask = defineContract({
  ...common,
  name: "a2a.tasks.cancel",
  description: "Cancel one of your tasks that has not ended (A2A tasks/cancel); its turn stops.",
  input: TaskIdParams,
  output: Task,
  sensitivity: "medium",
  mutating: true,
  changesAccess: false
})

export const extendedCard = defineContract({
  ...common,
  name: "a2a.card.extended",
  description: "The authenticated extended Agent Card: this workspace's agent and its skills (its workspace agents and tools).",
  input: EmptyParams,
  output: Schema.Unknown,
  sensitivity: "low",
  mutating: false
})
