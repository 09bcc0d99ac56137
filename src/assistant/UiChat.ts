/**
 * The AI SDK `useChat` routes' handlers (docs/decisions.md, "Issue 26: the AI SDK UI message
 * stream"). A chat id stands for one conversation of its person: a conversation's public id (cnv_),
 * or any other id, which names the conversation whose public id is derived from it, the workspace
 * and the person (its first turn creates it). The server keeps the history: of the
 * messages useChat sends, only the last one is read. A person's message is a turn's content; an
 * assistant message carrying tool-approval responses resolves those approvals through
 * `agent.approvals.resolve`. The gateway frames what these return with src/assistant/UiMessageStream.ts.
 */
import { createHash, randomUUID } from "node:crypto"
import { isTextUIPart, isToolUIPart, safeValidateUIMessages, type UIMessage } from "ai"
import { Effect, Exit } from "effect"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { invoke } from "../checkpoint/Checkpoint.ts"
import { personOf } from "../checkpoint/Person.ts"
import { BadRequest } from "../platform/Errors.ts"
import { FailureDescriber } from "../platform/Failures.ts"
import * as Api from "./Api.ts"
import { pathOf, prepareTurn } from "./Assistant.ts"
import type { StartedTurn } from "./ChatEvents.ts"
import { findConversation, findRunningTurnIn } from "./Queries.ts"
import { startTurn } from "./Turn.ts"
import * as TurnControl from "./TurnControl.ts"
import { foundOnceCaughtUp, resumeTurn } from "./TurnFollow.ts"
import type { ApprovalAnswer } from "./UiMessageStream.ts"

/** What a useChat request started: a turn, or the answers to the approvals it carried (continuing message `messageId`). */
export type UiChatAnswer =
  | { readonly _tag: "turn"; readonly turn: StartedTurn }
  | { readonly _tag: "approvals"; readonly messageId: string; readonly answers: ReadonlyArray<ApprovalAnswer> }

/** A chat id that is a conversation's public id. */
const CONVERSATION_PUBLIC_ID = /^cnv_[0-9a-f]{32}$/

/** The public id of the conversation a chat id stands for when it names none: derived from it, the workspace and the person. */
const derivedPublicId = (invocation: Invocation, userId: string, chatId: string): string =>
  `cnv_${createHash("sha256").update(`${invocation.workspaceId}\n${userId}\n${chatId}`).digest("hex").slice(0, 32)}`

/**
 * The chat's conversation: the one its id names, else the one derived from it (looked for once this
 * node's read models caught up with the log); `derived` names the conversation its first turn creates.
 */
const conversationOfChat = (invocation: Invocation, userId: string, chatId: string) =>
  Effect.gen(function* () {
    const derived = derivedPublicId(invocation, userId, chatId)
    const named = CONVERSATION_PUBLIC_ID.test(chatId) ? yield* findConversation(invocation.workspaceId!, chatId) : undefined
    return { derived, found: named ?? (yield* foundOnceCaughtUp(findConversation(invocation.workspaceId!, derived))) }
  })

const badRequest = (message: string) => new BadRequest({ reason: "invalid_input", message })

/** The person's message as the turn's content: its text parts, one after the other. */
const contentOf = (message: UIMessage) => {
  const content = message.parts.filter(isTextUIPart).map((part) => part.text).join("\n")
  return content.trim() === "" ? Effect.fail(badRequest("the last message has no text")) : Effect.succeed(content)
}

/** A turn of the chat, on its conversation (a first turn creates it). */
const startChatTurn = (invocation: Invocation, chatId: string, content: string) =>
  Effect.gen(function* () {
    const userId = yield* personOf(invocation)
    const { derived, found } = yield* conversationOfChat(invocation, userId, chatId)
    const turnId = randomUUID()
    const prepared = yield* prepareTurn(invocation, { content, conversationId: found?.publicId ?? null, turnId }, found === undefined ? derived : null)
    const answer: UiChatAnswer = { _tag: "turn", turn: yield* startTurn(prepared) }
    return answer
  })

/** Each approval the message answered, resolved as the person would on the approvals route. */
const resolveApprovals = (invocation: Invocation, message: UIMessage) =>
  Effect.gen(function* () {
    const describe = yield* FailureDescriber
    const path = yield* pathOf(invocation)
    const responded = message.parts.filter(isToolUIPart).flatMap((part) => (part.state === "approval-responded" ? [part] : []))
    if (responded.length === 0) return yield* badRequest("the last message is the assistant's and answers no approval: send the person's message last")
    const answers = yield* Effect.forEach(responded, (part) =>
      Effect.map(
        Effect.exit(
          invoke({
            authorization: undefined,
            principal: invocation.principal,
            surface: "api",
            capability: Api.resolveApproval.name,
            path,
            input: Effect.succeed({ approvalId: part.approval.id, decision: part.approval.approved ? "approved" : "denied", ...(part.approval.reason === undefined ? {} : { note: part.approval.reason }) })
          })
        ),
        (exit): ApprovalAnswer => {
          if (Exit.isSuccess(exit)) return { toolCallId: part.toolCallId, execution: (exit.value as typeof Api.resolveApproval.output.Type).execution }
          const described = describe(exit.cause)
          return { toolCallId: part.toolCallId, refused: described.reason ?? described.code }
        }
      ))
    const answer: UiChatAnswer = { _tag: "approvals", messageId: message.id, answers }
    return answer
  })

export const chatUi = implement(Api.chatUi, (invocation, input) =>
  Effect.gen(function* () {
    const validated = yield* Effect.promise(() => safeValidateUIMessages({ messages: input.messages }))
    if (!validated.success) return yield* badRequest(`messages: ${validated.error.message}`)
    const last = validated.data.at(-1)!
    if (last.role === "user") return yield* startChatTurn(invocation, input.id, yield* contentOf(last))
    if (last.role === "assistant") return yield* resolveApprovals(invocation, last)
    return yield* badRequest("the last message must be the person's, or the assistant's carrying approval responses")
  })
)

/** The chat's running turn of the caller; undefined when none runs. */
const runningTurnOfChat = (invocation: Invocation, chatId: string) =>
  Effect.gen(function* () {
    const userId = yield* personOf(invocation)
    const { found } = yield* conversationOfChat(invocation, userId, chatId)
    if (found === undefined) return undefined
    const run = yield* foundOnceCaughtUp(findRunningTurnIn(invocation.workspaceId!, userId, found.conversationId))
    return run === undefined ? undefined : { run, userId }
  })

/** The chat's running turn followed from its start (useChat's resume replaces the message it streams); null when none runs. */
export const chatUiStream = implement(Api.chatUiStream, (invocation, input) =>
  Effect.gen(function* () {
    const running = yield* runningTurnOfChat(invocation, input.id)
    return running === undefined ? null : yield* resumeTurn(invocation, running.run, 0)
  })
)

/** Stops the chat's running turn as the cancel route does. */
export const chatUiStop = implement(Api.chatUiStop, (invocation, input) =>
  Effect.gen(function* () {
    const running = yield* runningTurnOfChat(invocation, input.id)
    if (running === undefined || running.run.turnId === null) return { found: false }
    return { found: yield* TurnControl.stopTurn(running.run.conversationId, running.run.turnId, running.userId, invocation.meta) }
  })
)

export const uiChatCapabilities: ReadonlyArray<AnyCapability> = [chatUi, chatUiStream, chatUiStop]
