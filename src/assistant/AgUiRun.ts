/**
 * The AG-UI route's handler (docs/decisions.md, "Issue 26: AG-UI"). The thread id is a chat id: the
 * conversation it stands for (src/assistant/ChatThread.ts). The server keeps the history: of the
 * messages a client sends, only the last person's message is read, as the turn's content. A run
 * carrying resume entries answers the interrupts a previous run ended with: each approval resolved
 * through `agent.approvals.resolve`. A connect (the client's `connectAgent`) follows the thread's
 * running turn from its start. The gateway frames what these return with src/assistant/AgUi.ts.
 */
import { Effect } from "effect"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { BadRequest } from "../platform/Errors.ts"
import { type AgUiRun, approvalOfInterrupt, type ResumeAnswer } from "./AgUi.ts"
import * as Api from "./Api.ts"
import type { StartedTurn } from "./ChatEvents.ts"
import { resolveApprovalOfChat, runningTurnOfChat, startChatTurn } from "./ChatThread.ts"
import { type ResumedTurn, resumeTurn } from "./TurnFollow.ts"

/** What an AG-UI run started: a turn (with the turnId that cancels it), or the answers to the interrupts it resumed. */
export type AgUiAnswer = { readonly run: AgUiRun } & (
  | { readonly _tag: "turn"; readonly turn: StartedTurn; readonly turnId: string }
  | { readonly _tag: "resumed"; readonly answers: ReadonlyArray<ResumeAnswer> }
)

const badRequest = (message: string) => new BadRequest({ reason: "invalid_input", message })

/** An AG-UI message's text: its content when a string, else its text parts one after the other. */
const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.flatMap((part) => (part !== null && typeof part === "object" && part.type === "text" && typeof part.text === "string" ? [part.text] : [])).join("\n")
    : ""

/** The last person's message as the turn's content. */
const contentOf = (messages: ReadonlyArray<unknown>) => {
  const last = messages.findLast((message): message is { role: string; content?: unknown } => message !== null && typeof message === "object" && (message as { role?: unknown }).role === "user")
  const content = last === undefined ? "" : textOf(last.content)
  return content.trim() === "" ? Effect.fail(badRequest("messages: no message of the user with text")) : Effect.succeed(content)
}

type ResumeEntry = NonNullable<typeof Api.AgUiRunInput.Type["resume"]>[number]

/** The approval answer a resume entry carries: approved when resolved with `{ approved: true }`; a cancelled interrupt is a denial. */
const decisionOf = (entry: ResumeEntry) => {
  const payload = entry.payload !== null && typeof entry.payload === "object" ? (entry.payload as { approved?: unknown; note?: unknown }) : {}
  return {
    approved: entry.status === "resolved" && payload.approved === true,
    note: typeof payload.note === "string" ? payload.note : undefined
  }
}

/** Each interrupt the run answers, its approval resolved as the person would on the approvals route. */
const resolveInterrupts = (invocation: Invocation, run: AgUiRun, resume: ReadonlyArray<ResumeEntry>) =>
  Effect.gen(function* () {
    const answers = yield* Effect.forEach(resume, (entry) =>
      Effect.gen(function* () {
        const approval = approvalOfInterrupt(entry.interruptId)
        if (approval === undefined) return yield* badRequest(`resume: ${entry.interruptId} is no interrupt of this route`)
        const { approved, note } = decisionOf(entry)
        const resolution = yield* resolveApprovalOfChat(invocation, approval.approvalId, approved, note)
        const answer: ResumeAnswer = { toolCallId: approval.toolCallId, ...resolution }
        return answer
      }))
    const answer: AgUiAnswer = { _tag: "resumed", run, answers }
    return answer
  })

export const chatAgUi = implement(Api.chatAgUi, (invocation, input) =>
  Effect.gen(function* () {
    const run: AgUiRun = { threadId: input.threadId, runId: input.runId }
    if (input.resume !== undefined && input.resume.length > 0) return yield* resolveInterrupts(invocation, run, input.resume)
    const { turn, turnId } = yield* startChatTurn(invocation, input.threadId, yield* contentOf(input.messages))
    const answer: AgUiAnswer = { _tag: "turn", run, turn, turnId }
    return answer
  })
)

/** What an AG-UI connect found: the thread's running turn followed from its start, or null when none runs. */
export interface AgUiConnection {
  readonly run: AgUiRun
  readonly resumed: ResumedTurn | null
}

/** The thread's running turn, followed from its start (a connecting client rebuilds the run from its first event). */
export const chatAgUiConnect = implement(Api.chatAgUiConnect, (invocation, input) =>
  Effect.gen(function* () {
    const running = yield* runningTurnOfChat(invocation, input.threadId)
    const connection: AgUiConnection = {
      run: { threadId: input.threadId, runId: input.runId },
      resumed: running === undefined ? null : yield* resumeTurn(invocation, running.run, 0)
    }
    return connection
  })
)

export const agUiCapabilities: ReadonlyArray<AnyCapability> = [chatAgUi, chatAgUiConnect]
