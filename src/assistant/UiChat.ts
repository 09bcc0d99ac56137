/**
 * The AI SDK `useChat` routes' handlers (docs/decisions.md, "Issue 26: the AI SDK UI message
 * stream"). A chat id stands for one conversation of its person (src/assistant/ChatThread.ts).
 * The server keeps the history: of the
 * messages useChat sends, only the last one is read. A person's message is a turn's content; an
 * assistant message carrying tool-approval responses resolves those approvals through
 * `agent.approvals.resolve`. The gateway frames what these return with src/assistant/UiMessageStream.ts.
 */
import { isTextUIPart, isToolUIPart, safeValidateUIMessages, type UIMessage } from "ai"
import { Effect } from "effect"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { BadRequest } from "../platform/Errors.ts"
import * as Api from "./Api.ts"
import type { StartedTurn } from "./ChatEvents.ts"
import { resolveApprovalOfChat, runningTurnOfChat, startChatTurn } from "./ChatThread.ts"
import * as TurnControl from "./TurnControl.ts"
import { resumeTurn } from "./TurnFollow.ts"
import type { ApprovalAnswer } from "./UiMessageStream.ts"

/** What a useChat request started: a turn, or the answers to the approvals it carried (continuing message `messageId`). */
export type UiChatAnswer =
  | { readonly _tag: "turn"; readonly turn: StartedTurn }
  | { readonly _tag: "approvals"; readonly messageId: string; readonly answers: ReadonlyArray<ApprovalAnswer> }

const badRequest = (message: string) => new BadRequest({ reason: "invalid_input", message })

/** The person's message as the turn's content: its text parts, one after the other. */
const contentOf = (message: UIMessage) => {
  const content = message.parts.filter(isTextUIPart).map((part) => part.text).join("\n")
  return content.trim() === "" ? Effect.fail(badRequest("the last message has no text")) : Effect.succeed(content)
}

/** Each approval the message answered, resolved as the person would on the approvals route. */
const resolveApprovals = (invocation: Invocation, message: UIMessage) =>
  Effect.gen(function* () {
    const responded = message.parts.filter(isToolUIPart).flatMap((part) => (part.state === "approval-responded" ? [part] : []))
    if (responded.length === 0) return yield* badRequest("the last message is the assistant's and answers no approval: send the person's message last")
    const answers = yield* Effect.forEach(responded, (part) =>
      Effect.map(
        resolveApprovalOfChat(invocation, part.approval.id, part.approval.approved, part.approval.reason),
        (resolution): ApprovalAnswer => ({ toolCallId: part.toolCallId, ...resolution })
      ))
    const answer: UiChatAnswer = { _tag: "approvals", messageId: message.id, answers }
    return answer
  })

export const chatUi = implement(Api.chatUi, (invocation, input) =>
  Effect.gen(function* () {
    const validated = yield* Effect.promise(() => safeValidateUIMessages({ messages: input.messages }))
    if (!validated.success) return yield* badRequest(`messages: ${validated.error.message}`)
    const last = validated.data.at(-1)!
    if (last.role === "user") {
      const { turn } = yield* startChatTurn(invocation, input.id, yield* contentOf(last))
      const answer: UiChatAnswer = { _tag: "turn", turn }
      return answer
    }
    if (last.role === "assistant") return yield* resolveApprovals(invocation, last)
    return yield* badRequest("the last message must be the person's, or the assistant's carrying approval responses")
  })
)

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
