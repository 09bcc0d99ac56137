/**
 * The A2A methods as capabilities on their own surface, `a2a`, so they pass the one checkpoint:
 * a workspace key (or a person) acts in its own workspace, and a task of another workspace is
 * not found (-32001), never revealed. `a2a.message.send` prepares the turn with the chat's own
 * checks (7.1); the gateway runs it (gateway/a2a.ts).
 */
import { Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { A2aTaskActor } from "../../actors/a2atask/actor.ts"
import { TaskNotFound } from "../../actors/a2atask/errors.ts"
import { CancelTask, ReceiveMessage } from "../../actors/a2atask/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { extendedAgentCard } from "../a2a/Card.ts"
import { EmptyParams, MessageSendParams, TaskIdParams, TaskQueryParams } from "../a2a/Protocol.ts"
import { findTask, taskView } from "../a2a/TaskQueries.ts"
import { contentOf, contextOfConversation, conversationOfContext, type NewTask, userMessage } from "../a2a/Tasks.ts"
import { findConversation } from "../assistant/ChatQueries.ts"
import { agentToolsFor } from "../assistant/Tools.ts"
import * as TurnControl from "../assistant/TurnControl.ts"
import { slugsOf } from "../Auth.ts"
import { type AnyCapability, Capabilities, defineCapability } from "../Capabilities.ts"
import { BadRequest } from "../Errors.ts"
import { PublicUrl } from "./Organization.ts"
import { askers, prepareTurn } from "./Assistant.ts"

const common = {
  scope: "workspace",
  surfaces: ["a2a"],
  roles: askers,
  claimedBy: "builtin",
  destructive: false,
  needsApproval: false
} as const

/** What message/send hands the gateway: a new task to run, or the answer that resumes a waiting one. */
export type MessageSendPlan = { readonly kind: "new"; readonly task: NewTask } | { readonly kind: "resumed"; readonly taskId: string }

export const sendMessage = defineCapability({
  ...common,
  name: "a2a.message.send",
  description: "Send a message to the workspace agent (A2A message/send and message/stream): a new task, a message continuing a context, or the answer to a task waiting for input.",
  input: MessageSendParams,
  // the plan stays in the process; the gateway runs it
  output: Schema.Unknown,
  sensitivity: "medium",
  mutating: true,
  changesAccess: false,
  handler: (invocation, params) =>
    Effect.gen(function* () {
      const { message } = params
      const workspaceId = invocation.workspaceId!
      if (message.taskId !== undefined) {
        // the caller answers the question its task waits on; the task's actor decides whether it may
        const task = yield* findTask(workspaceId, message.taskId)
        if (task === undefined) return yield* new TaskNotFound({ taskId: message.taskId })
        const host = yield* ActorHost
        const questionId = task.pendingQuestionId
        yield* host.send(
          A2aTaskActor,
          task.taskId,
          new ReceiveMessage({ taskId: task.taskId, message: userMessage(task.taskId, task.contextId, message), userId: invocation.principal.attributedTo ?? "" }),
          invocation.meta
        )
        const conversation = yield* findConversation(workspaceId, task.conversationId)
        if (conversation !== undefined && questionId !== null) {
          yield* TurnControl.answerQuestion(conversation.conversationId, questionId, task.userId, contentOf(message), { ...invocation.meta, commandId: `${invocation.meta.commandId}:answer` })
        }
        return { kind: "resumed", taskId: task.taskId } satisfies MessageSendPlan
      }
      let conversationRef: string | null = null
      let newConversation: string | null = null
      let contextId: string
      if (message.contextId !== undefined) {
        conversationRef = conversationOfContext(message.contextId)
        if (conversationRef === null) return yield* new BadRequest({ reason: "invalid_context_id", message: `${message.contextId} is not a context id this agent issued` })
        contextId = message.contextId
      } else {
        newConversation = invocation.newId("cnv")
        contextId = contextOfConversation(newConversation)
      }
      const turn = yield* prepareTurn(invocation, { content: contentOf(message), conversationId: conversationRef, turnId: randomUUID() }, newConversation)
      return { kind: "new", task: { taskId: invocation.newId("a2a"), contextId, turn, message } } satisfies MessageSendPlan
    })
})

const Task = Schema.Unknown

export const getTask = defineCapability({
  ...common,
  name: "a2a.tasks.get",
  description: "Read a task (A2A tasks/get); historyLength keeps the last N messages of its history.",
  input: TaskQueryParams,
  output: Task,
  sensitivity: "low",
  mutating: false,
  handler: (invocation, params) =>
    Effect.gen(function* () {
      const task = yield* findTask(invocation.workspaceId!, params.id)
      if (task === undefined) return yield* new TaskNotFound({ taskId: params.id })
      return taskView(task, params.historyLength)
    })
})

export const cancelTask = defineCapability({
  ...common,
  name: "a2a.tasks.cancel",
  description: "Cancel a task that has not ended (A2A tasks/cancel); its turn stops.",
  input: TaskIdParams,
  output: Task,
  sensitivity: "medium",
  mutating: true,
  changesAccess: false,
  handler: (invocation, params) =>
    Effect.gen(function* () {
      const workspaceId = invocation.workspaceId!
      const host = yield* ActorHost
      // a malformed or foreign id is not found, like an unknown one
      if ((yield* findTask(workspaceId, params.id)) === undefined) return yield* new TaskNotFound({ taskId: params.id })
      yield* host.send(A2aTaskActor, params.id, new CancelTask({ taskId: params.id, workspaceId }), invocation.meta)
      const task = (yield* findTask(workspaceId, params.id))!
      // stop its turn, wherever it runs (a task cancelled before its run started is stopped by its own process)
      const conversation = yield* findConversation(workspaceId, task.conversationId)
      if (conversation !== undefined && task.runId !== null) {
        yield* TurnControl.stopTurn(conversation.conversationId, task.turnId, task.userId, { ...invocation.meta, commandId: `${invocation.meta.commandId}:stop` })
      }
      return taskView(task)
    })
})

export const extendedCard = defineCapability({
  ...common,
  name: "a2a.card.extended",
  description: "The authenticated extended Agent Card: this workspace's agent and its skills.",
  input: EmptyParams,
  output: Schema.Unknown,
  sensitivity: "low",
  mutating: false,
  handler: (invocation) =>
    Effect.gen(function* () {
      const [orgSlug, workspaceSlug] = (yield* slugsOf(invocation.orgId!, invocation.workspaceId)).split("/")
      return extendedAgentCard(yield* PublicUrl, { orgSlug, workspaceSlug }, agentToolsFor(yield* Capabilities, invocation))
    })
})

export const a2aCapabilities: ReadonlyArray<AnyCapability> = [sendMessage, getTask, cancelTask, extendedCard]
