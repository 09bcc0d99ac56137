/**
 * What the chat protocols' routes share (the AI SDK's useChat, src/assistant/UiChat.ts; AG-UI,
 * src/assistant/AgUiRun.ts): a client's chat or thread id stands for one conversation of its person,
 * and an approval the client answered is resolved as the person would on the approvals route.
 *
 * A chat id is a conversation's public id (cnv_), or any other id, which names the conversation
 * whose public id is derived from it, the workspace and the person (its first turn creates it).
 */
import { createHash, randomUUID } from "node:crypto"
import { Effect, Exit } from "effect"
import type { Invocation } from "../checkpoint/Capability.ts"
import { invoke } from "../checkpoint/Checkpoint.ts"
import { personOf } from "../checkpoint/Person.ts"
import { FailureDescriber, type FailureDescription } from "../platform/Failures.ts"
import * as Api from "./Api.ts"
import { pathOf, prepareTurn } from "./Assistant.ts"
import { findConversation, findRunningTurnIn } from "./Queries.ts"
import { startTurn } from "./Turn.ts"
import { foundOnceCaughtUp } from "./TurnFollow.ts"

/** A chat id that is a conversation's public id. */
const CONVERSATION_PUBLIC_ID = /^cnv_[0-9a-f]{32}$/

/** The public id of the conversation a chat id stands for when it names none: derived from it, the workspace and the person. */
const derivedPublicId = (invocation: Invocation, userId: string, chatId: string): string =>
  `cnv_${createHash("sha256").update(`${invocation.workspaceId}\n${userId}\n${chatId}`).digest("hex").slice(0, 32)}`

/**
 * The chat's conversation: the one its id names, else the one derived from it (looked for once this
 * node's read models caught up with the log); `derived` names the conversation its first turn creates.
 */
export const conversationOfChat = (invocation: Invocation, userId: string, chatId: string) =>
  Effect.gen(function* () {
    const derived = derivedPublicId(invocation, userId, chatId)
    const named = CONVERSATION_PUBLIC_ID.test(chatId) ? yield* findConversation(invocation.workspaceId!, chatId) : undefined
    return { derived, found: named ?? (yield* foundOnceCaughtUp(findConversation(invocation.workspaceId!, derived))) }
  })

/** A turn of the chat, on its conversation (a first turn creates it), and the turnId it runs under (the cancel route's). */
export const startChatTurn = (invocation: Invocation, chatId: string, content: string) =>
  Effect.gen(function* () {
    const userId = yield* personOf(invocation)
    const { derived, found } = yield* conversationOfChat(invocation, userId, chatId)
    const turnId = randomUUID()
    const prepared = yield* prepareTurn(invocation, { content, conversationId: found?.publicId ?? null, turnId }, found === undefined ? derived : null)
    return { turnId, turn: yield* startTurn(prepared) }
  })

/** The chat's running turn of the caller; undefined when none runs. */
export const runningTurnOfChat = (invocation: Invocation, chatId: string) =>
  Effect.gen(function* () {
    const userId = yield* personOf(invocation)
    const { found } = yield* conversationOfChat(invocation, userId, chatId)
    if (found === undefined) return undefined
    const run = yield* foundOnceCaughtUp(findRunningTurnIn(invocation.workspaceId!, userId, found.conversationId))
    return run === undefined ? undefined : { run, userId }
  })

/** What became of one approval a client answered: its execution (spec 2.4), or why the resolve was refused. */
export type ApprovalResolution =
  | { readonly execution: typeof Api.Execution.Type }
  | { readonly refused: Pick<FailureDescription, "code" | "reason" | "message"> }

/** The person's answer to one approval, resolved through `agent.approvals.resolve` as on the approvals route. */
export const resolveApprovalOfChat = (invocation: Invocation, approvalId: string, approved: boolean, note: string | undefined) =>
  Effect.gen(function* () {
    const describe = yield* FailureDescriber
    const path = yield* pathOf(invocation)
    const exit = yield* Effect.exit(
      invoke({
        authorization: undefined,
        principal: invocation.principal,
        surface: "api",
        capability: Api.resolveApproval.name,
        path,
        input: Effect.succeed({ approvalId, decision: approved ? "approved" : "denied", ...(note === undefined ? {} : { note }) })
      })
    )
    if (Exit.isSuccess(exit)) return { execution: (exit.value as typeof Api.resolveApproval.output.Type).execution } satisfies ApprovalResolution
    const described = describe(exit.cause)
    return { refused: { code: described.code, reason: described.reason, message: described.message } } satisfies ApprovalResolution
  })
