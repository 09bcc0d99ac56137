/**
 * The A2A methods as capabilities on their own surface, `a2a`, so they pass the one checkpoint:
 * a workspace key (or a person) acts in its own workspace, and reads, follows, answers and cancels
 * only its person's tasks: another person's task, or another workspace's, is not found (-32001),
 * never revealed. A new task's turn passes the chat's own checks (7.1). The streaming methods
 * answer with the started task, whose updates the gateway frames as SSE.
 */
import { packsOf } from "../packs/Entitlement.ts"
import { Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { A2aTaskActor } from "../../actors/a2atask/actor.ts"
import { TaskNotFound, TaskNotSubscribable } from "../../actors/a2atask/errors.ts"
import { isTerminal } from "../../actors/a2atask/events.ts"
import { CancelTask, ReceiveMessage } from "../../actors/a2atask/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { AgentSlug } from "../../actors/agent/events.ts"
import { AGENT_SLUG_METADATA, extendedAgentCard } from "./Card.ts"
import type { MessageSendParams } from "./Protocol.ts"
import { listOwnTasks, readTask, type TaskCursor, taskView } from "./Queries.ts"
import { DEFAULT_PAGE_SIZE, stateFromV1, type TaskPage } from "./V1.ts"
import { contentOf, keptParts, sealedParts, uploadsOf } from "./Parts.ts"
import { personSealer } from "../audit/PersonalData.ts"
import { contextOfConversation, conversationOfContext, type NewTask, sendAndSettle, streamTask } from "./Tasks.ts"
import { findConversation } from "../assistant/Queries.ts"
import { uploadFiles } from "../assistant/Files.ts"
import { agentToolsFor } from "../assistant/Tools.ts"
import { listAgents } from "../assistant/WorkspaceAgents.ts"
import * as TurnControl from "../assistant/TurnControl.ts"
import { slugsOf } from "../identity/Auth.ts"
import { type AnyCapability, Capabilities, implement, type Invocation } from "../checkpoint/Capability.ts"
import { AS_OF_METADATA, readAsOf } from "../platform/AsOf.ts"
import { BadRequest } from "../platform/Errors.ts"
import { PublicUrl } from "../identity/Organization.ts"
import { prepareTurn } from "../assistant/Assistant.ts"
import { uploaderOf } from "../assistant/Attachments.ts"
import { ownRecord, personOf } from "../checkpoint/Person.ts"
import * as Api from "./Api.ts"

/**
 * The workspace agent a new task's turn runs as, named in `message.metadata.agentSlug` (the
 * extended card's extension); undefined: the workspace assistant.
 */
const agentSlugOf = (metadata: Readonly<Record<string, unknown>> | undefined) => {
  const named = metadata?.[AGENT_SLUG_METADATA]
  if (named === undefined) return Effect.succeed(undefined)
  return Schema.decodeUnknown(AgentSlug)(named).pipe(
    Effect.mapError(() => new BadRequest({ reason: "invalid_agent_slug", message: `message.metadata.${AGENT_SLUG_METADATA} must be the slug of one of the workspace's agents` }))
  )
}

/** The caller's person's task; another person's, of this workspace or another, is -32001 as an unknown one. */
const ownTask = (invocation: Invocation, taskId: string) =>
  ownRecord(invocation, readTask(invocation.workspaceId!, taskId), () => new TaskNotFound({ taskId }))

/** A message accepted: a new task to run, or the answer that resumes a waiting one. */
type AcceptedMessage = { readonly task: NewTask } | { readonly taskId: string }

/**
 * message/send and message/stream: the caller's message, checked and recorded as its task's start
 * or answer. A new task's files are stored as attachments of its turn (src/a2a/Parts.ts).
 */
const acceptMessage = (invocation: Invocation, params: MessageSendParams) =>
  Effect.gen(function* () {
    const { message } = params
    const workspaceId = invocation.workspaceId!
    const content = contentOf(message.parts)
    if (message.taskId !== undefined) {
      // the caller answers the question its own task waits on; the task's actor decides whether it still waits
      const task = yield* ownTask(invocation, message.taskId)
      // the answer to a question is text (the question's answer): a file has no place in it
      if (message.parts.some((part) => part.kind === "file")) {
        return yield* new BadRequest({ reason: "file_in_answer", message: "a message answering the agent's question carries text and data parts, not files" })
      }
      const host = yield* ActorHost
      const questionId = task.pendingQuestionId
      yield* host.send(
        A2aTaskActor,
        task.taskId,
        // the answer is the task's person's words, sealed under their key (docs/audit.md)
        new ReceiveMessage({ taskId: task.taskId, message: { messageId: message.messageId, parts: sealedParts(yield* personSealer(task.userId), keptParts(message.parts, [])) }, userId: invocation.principal.attributedTo ?? "" }),
        invocation.meta
      )
      const conversation = yield* findConversation(workspaceId, task.conversationId)
      if (conversation !== undefined && questionId !== null) {
        yield* TurnControl.answerQuestion(conversation.conversationId, questionId, task.userId, content, { ...invocation.meta, commandId: `${invocation.meta.commandId}:answer` })
      }
      return { taskId: task.taskId, answered: true }
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
    const uploads = yield* uploadsOf(message.parts)
    const agentSlug = yield* agentSlugOf(message.metadata)
    const turn = yield* prepareTurn(invocation, { content, conversationId: conversationRef, turnId: randomUUID() }, newConversation, agentSlug)
    // the turn's checks first, as for a chat request's attachments; then its files are stored as attachments of it
    const files = uploads.length === 0
      ? []
      : yield* uploadFiles(uploaderOf(invocation), uploads, invocation.newId, invocation.meta).pipe(Effect.onError(() => Effect.sync(turn.place.ended)))
    return {
      task: {
        taskId: invocation.newId("a2a"),
        contextId,
        turn: { ...turn, attachments: files.map((file) => file.fileId) },
        message: { messageId: message.messageId, parts: keptParts(message.parts, files) }
      }
    }
  })

export const sendMessage = implement(Api.sendMessage, (invocation, params) =>
  Effect.flatMap(acceptMessage(invocation, params), (accepted) =>
    sendAndSettle(invocation.workspaceId!, accepted, {
      blocking: params.configuration?.blocking !== false,
      historyLength: params.configuration?.historyLength
    }))
)

export const streamMessage = implement(Api.streamMessage, (invocation, params) =>
  Effect.flatMap(acceptMessage(invocation, params), (accepted) => streamTask(invocation, accepted))
)

/** The caller's person's task as it stood at `asOf` (`metadata.asOf`); another's is -32001 as an unknown one. */
const ownTaskAsOf = (invocation: Invocation, taskId: string, asOf: unknown) =>
  Effect.gen(function* () {
    const person = yield* personOf(invocation)
    const belongs = (task: typeof A2aTaskActor.initialState) => task._tag === "Task" && task.workspaceId === invocation.workspaceId && task.userId === person
    const { state: task } = yield* readAsOf(A2aTaskActor, taskId, `task ${taskId}`, asOf, invocation.at, belongs, () => new TaskNotFound({ taskId }))
    // a task the caller's is never absent again once submitted
    return task._tag === "Task" ? task : yield* new TaskNotFound({ taskId })
  })

export const getTask = implement(Api.getTask, (invocation, params) =>
  Effect.gen(function* () {
    const asOf = params.metadata?.[AS_OF_METADATA]
    const task = asOf === undefined ? yield* ownTask(invocation, params.id) : yield* ownTaskAsOf(invocation, params.id, asOf)
    return yield* taskView(task, params.historyLength)
  })
)

/** A page token: where the last page ended, opaque to the caller. */
const pageToken = (cursor: TaskCursor) => Buffer.from(JSON.stringify([cursor.updatedAt, cursor.taskId])).toString("base64url")

const invalidPageToken = new BadRequest({ reason: "invalid_page_token", message: "pageToken is not one a ListTasks answer gave" })

const cursorOf = (token: string) =>
  Effect.try({
    try: (): TaskCursor => {
      const [updatedAt, taskId] = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as unknown[]
      if (typeof updatedAt !== "string" || Number.isNaN(Date.parse(updatedAt)) || typeof taskId !== "string") throw invalidPageToken
      return { updatedAt, taskId }
    },
    catch: () => invalidPageToken
  })

const badFilter = (field: string, message: string) => new BadRequest({ reason: `invalid_${field}`, message })

/**
 * ListTasks (A2A 1.0): the caller's person's own tasks in this workspace, as tasks/get shows each
 * (artifacts only when asked), newest status first; another person's are never listed.
 */
export const listTasks = implement(Api.listTasks, (invocation, params) =>
  Effect.gen(function* () {
    const person = yield* personOf(invocation)
    const state = params.status === undefined || params.status === "TASK_STATE_UNSPECIFIED" ? undefined : stateFromV1(params.status)
    if (params.status !== undefined && params.status !== "TASK_STATE_UNSPECIFIED" && state === undefined) return yield* badFilter("status", `status ${params.status} is not an A2A task state`)
    if (params.statusTimestampAfter !== undefined && Number.isNaN(Date.parse(params.statusTimestampAfter))) {
      return yield* badFilter("status_timestamp_after", "statusTimestampAfter must be an ISO 8601 time")
    }
    const cursor = params.pageToken === undefined || params.pageToken === "" ? undefined : yield* cursorOf(params.pageToken)
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE
    const { tasks, total } = yield* listOwnTasks(
      invocation.workspaceId!,
      person,
      { contextId: params.contextId || undefined, state, updatedAfter: params.statusTimestampAfter },
      cursor,
      pageSize
    )
    const page = tasks.slice(0, pageSize)
    const last = page.at(-1)
    return {
      tasks: yield* Effect.forEach(page, (task) =>
        Effect.map(taskView(task, params.historyLength), ({ artifacts, ...view }) => (params.includeArtifacts === true ? { ...view, artifacts } : view))),
      nextPageToken: tasks.length > pageSize && last !== undefined ? pageToken({ updatedAt: last.updatedAt, taskId: last.taskId }) : "",
      pageSize,
      totalSize: total
    } satisfies TaskPage
  })
)

export const resubscribe = implement(Api.resubscribe, (invocation, params) =>
  Effect.gen(function* () {
    const task = yield* ownTask(invocation, params.id)
    if (params.refuseEnded === true && isTerminal(task.state)) return yield* new TaskNotSubscribable({ taskId: params.id, state: task.state })
    return yield* streamTask(invocation, { taskId: params.id })
  })
)

export const cancelTask = implement(Api.cancelTask, (invocation, params) =>
  Effect.gen(function* () {
    const workspaceId = invocation.workspaceId!
    const host = yield* ActorHost
    // a malformed id, or another person's or workspace's task, is not found, like an unknown one
    yield* ownTask(invocation, params.id)
    yield* host.send(A2aTaskActor, params.id, new CancelTask({ taskId: params.id, workspaceId }), invocation.meta)
    const task = (yield* readTask(workspaceId, params.id))!
    // stop its turn, wherever it runs (a task cancelled before its run started is stopped by its own process)
    const conversation = yield* findConversation(workspaceId, task.conversationId)
    if (conversation !== undefined && task.runId !== null) {
      yield* TurnControl.stopTurn(conversation.conversationId, task.turnId, task.userId, { ...invocation.meta, commandId: `${invocation.meta.commandId}:stop` })
    }
    return yield* taskView(task)
  })
)

export const extendedCard = implement(Api.extendedCard, (invocation) =>
  Effect.gen(function* () {
    const [orgSlug, workspaceSlug] = (yield* slugsOf(invocation.orgId!, invocation.workspaceId)).split("/")
    const agents = yield* listAgents(invocation.workspaceId!)
    return extendedAgentCard(yield* PublicUrl, { orgSlug, workspaceSlug }, agents, agentToolsFor(yield* Capabilities, invocation, yield* packsOf(invocation.orgId)))
  })
)

export const a2aCapabilities: ReadonlyArray<AnyCapability> = [sendMessage, streamMessage, getTask, listTasks, resubscribe, cancelTask, extendedCard]
