/**
 * The AG-UI route's handler (docs/decisions.md, "Issue 26: AG-UI"). The thread id is a chat id: the
 * conversation it stands for (src/assistant/ChatThread.ts). The server keeps the history: of the
 * messages a client sends, only the last person's message is read, as the turn's content. A run
 * carrying resume entries answers the interrupts a previous run ended with: each approval resolved
 * through `agent.approvals.resolve`. The gateway frames what this returns with src/assistant/AgUi.ts.
 */
import { Effect } from "effect"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { BadRequest } from "../platform/Errors.ts"
import { type AgUiRun, approvalOfInterrupt, type ResumeAnswer } from "./AgUi.ts"
import * as Api from "./Api.ts"
import type { StartedTurn } from "./ChatEvents.ts"
import { resolveApprovalOfChat, startChatTurn } from "./ChatThread.ts"

/** What an AG-UI run started: a turn, or the answers to the interrupts it resumed. */
export type AgUiAnswer = { readonly run: AgUiRun } & (
  | { readonly _tag: "turn"; readonly turn: StartedTurn }
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
    const answer: AgUiAnswer = { _tag: "turn", run, turn: yield* startChatTurn(invocation, input.threadId, yield* contentOf(input.messages)) }
    return answer
  })
)

export const agUiCapabilities: ReadonlyArray<AnyCapability> = [chatAgUi]
