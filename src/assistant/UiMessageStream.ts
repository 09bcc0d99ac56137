/**
 * The AI SDK's UI message stream (protocol v1, what `useChat` and `readUIMessageStream` read) from a
 * turn's typed events (src/platform/Wire.ts) and its outcome, and from the approvals a useChat
 * request answered. The chunk types are the SDK's own (`UIMessageChunk`). No turn logic lives here:
 * the mapper keeps only what the protocol needs and the events leave out (the open text part's id;
 * a tool call's input, gathered from its deltas to be named whole; which call an approval or a
 * question belongs to; the usage, for `finish`).
 */
import { UI_MESSAGE_STREAM_HEADERS as SDK_HEADERS, type UIMessageChunk } from "ai"
import type { ChatEvent, QuestionEndEvent, Usage } from "../platform/Wire.ts"
import { reasonOf } from "./AgentTools.ts"
import type { ApprovalResolution } from "./ChatThread.ts"
import { previewOf, type TurnOutcome } from "./ChatEvents.ts"

/** The SDK's headers for the protocol, but the three the SSE writer sends itself. */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(SDK_HEADERS).filter(([name]) => !["content-type", "cache-control", "connection"].includes(name))
)

/** The `data:` line that ends the stream. */
export const UI_MESSAGE_STREAM_END = "[DONE]"

/** A question the agent asked: one `data-question` part, its id the question's (qst_), updated as it ends. */
export interface UiQuestion {
  readonly question: string
  readonly options: ReadonlyArray<string>
  readonly status: "open" | typeof QuestionEndEvent.Type.status
  readonly reason?: typeof QuestionEndEvent.Type.reason
}

/** The assistant message's metadata: its run on `start`; its usage, and whether it was stopped, on `finish`. */
export interface UiMessageMetadata {
  readonly runId?: string
  readonly usage?: Usage
  readonly stopped?: boolean
}

export type UiDataTypes = { question: UiQuestion }

export type UiChunk = UIMessageChunk<UiMessageMetadata, UiDataTypes>

/** The platform's tools are the workspace's capabilities, known at run time: dynamic tools to the SDK. */
const dynamic = true

/** A tool call whose input streamed and that has not yet started, parked or asked. */
interface PendingCall {
  readonly capability: string
  input: string
}

/** What the pending call's input says, as the turn previews it; the text itself when it is not JSON. */
const inputOf = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** One turn's stream: `event` for each of the turn's events in order, then `end` with its outcome. */
export class UiMessageStream {
  #textId: string | undefined = undefined
  #texts = 0
  #usage: Usage | undefined = undefined
  readonly #pending = new Map<string, PendingCall>()
  /** The calls the stream named (the SDK refuses an output for a call it was not told of). */
  readonly #named = new Set<string>()
  readonly #questions = new Map<string, { readonly toolCallId: string | undefined; readonly asked: UiQuestion }>()

  /** `messageId`: the assistant message the stream writes (default: the run's id, so a resumed stream writes the same one). */
  constructor(private readonly messageId?: string) {}

  event(event: ChatEvent): ReadonlyArray<UiChunk> {
    switch (event.type) {
      case "run":
        return [{ type: "start", messageId: this.messageId ?? event.runId, messageMetadata: { runId: event.runId } }]
      case "text":
        return [...this.#openText(), { type: "text-delta", id: this.#textId!, delta: event.text }]
      case "reasoning-start":
        return [...this.#closeText(), { type: "reasoning-start", id: event.reasoningId }]
      case "reasoning-delta":
        return [{ type: "reasoning-delta", id: event.reasoningId, delta: event.text }]
      case "reasoning-end":
        return [{ type: "reasoning-end", id: event.reasoningId }]
      case "step-start":
        return [{ type: "start-step" }]
      case "step-finish":
        return [...this.#closeText(), { type: "finish-step" }]
      case "tool-input-start":
        this.#pending.set(event.toolCallId, { capability: event.capability, input: "" })
        this.#named.add(event.toolCallId)
        return [...this.#closeText(), { type: "tool-input-start", toolCallId: event.toolCallId, toolName: event.capability, dynamic }]
      case "tool-input-delta": {
        const pending = this.#pending.get(event.toolCallId)
        if (pending === undefined) return []
        pending.input += event.delta
        return [{ type: "tool-input-delta", toolCallId: event.toolCallId, inputTextDelta: event.delta }]
      }
      case "tool-call-start":
        return this.#inputAvailable(event.toolCallId, event.capability, event.inputPreview)
      case "tool-call-end": {
        // a call that failed before it reached its tool ends with no call-start: its input is whole now
        const input = this.#inputAvailable(event.toolCallId, undefined, undefined)
        if (!this.#named.has(event.toolCallId)) return []
        const output: UiChunk = event.status === "completed"
          ? { type: "tool-output-available", toolCallId: event.toolCallId, output: event.output ?? null, dynamic }
          : { type: "tool-output-error", toolCallId: event.toolCallId, errorText: event.errorReason ?? "failed", dynamic }
        return [...input, output]
      }
      case "approval-required": {
        const toolCallId = this.#pendingCallFor(event.capability, event.inputPreview) ?? event.approvalId
        return [...this.#inputAvailable(toolCallId, event.capability, event.inputPreview), { type: "tool-approval-request", approvalId: event.approvalId, toolCallId }]
      }
      case "question": {
        const toolCallId = this.#pendingCallFor("ask_user", undefined)
        const asked: UiQuestion = { question: event.question, options: event.options, status: "open" }
        this.#questions.set(event.id, { toolCallId, asked })
        const call = toolCallId === undefined ? [] : this.#inputAvailable(toolCallId, undefined, undefined)
        return [...this.#closeText(), ...call, { type: "data-question", id: event.id, data: asked }]
      }
      case "question-end": {
        const question = this.#questions.get(event.id)
        if (question === undefined) return []
        const ended: UiQuestion = { ...question.asked, status: event.status, ...(event.reason === undefined ? {} : { reason: event.reason }) }
        const call: ReadonlyArray<UiChunk> = question.toolCallId === undefined ? [] : [{ type: "tool-output-available", toolCallId: question.toolCallId, output: { status: event.status }, dynamic }]
        return [...call, { type: "data-question", id: event.id, data: ended }]
      }
      case "usage":
        this.#usage = event.usage
        return []
      case "error":
        return [{ type: "error", errorText: event.message }]
    }
  }

  /** The stream's end: `finish` with the usage (a stop says so first with `abort`), or `error` then `finish`. */
  end(outcome: TurnOutcome): ReadonlyArray<UiChunk> {
    const usage = this.#usage === undefined ? {} : { usage: this.#usage }
    if ("failure" in outcome) {
      return [...this.#closeText(), { type: "error", errorText: outcome.failure.message }, { type: "finish", finishReason: "error", messageMetadata: usage }]
    }
    const { stopped } = outcome.result
    return [
      ...this.#closeText(),
      ...(stopped ? [{ type: "abort", reason: "stopped" } as const] : []),
      { type: "finish", finishReason: stopped ? "other" : "stop", messageMetadata: { ...usage, stopped } }
    ]
  }

  #openText(): ReadonlyArray<UiChunk> {
    if (this.#textId !== undefined) return []
    this.#textId = `text-${++this.#texts}`
    return [{ type: "text-start", id: this.#textId }]
  }

  #closeText(): ReadonlyArray<UiChunk> {
    if (this.#textId === undefined) return []
    const id = this.#textId
    this.#textId = undefined
    return [{ type: "text-end", id }]
  }

  /** The pending call of this capability whose input the turn previews as `preview` (any preview when undefined), else the first of it. */
  #pendingCallFor(capability: string, preview: string | undefined): string | undefined {
    const candidates = [...this.#pending].filter(([, call]) => call.capability === capability)
    const exact = preview === undefined ? undefined : candidates.find(([, call]) => previewOf(inputOf(call.input)) === preview)
    return (exact ?? candidates[0])?.[0]
  }

  /**
   * The call's whole input, once: from its streamed deltas, or (a call whose input did not stream)
   * from the turn's preview of it. Nothing for a call neither streamed nor named here.
   */
  #inputAvailable(toolCallId: string, capability: string | undefined, preview: string | undefined): ReadonlyArray<UiChunk> {
    const pending = this.#pending.get(toolCallId)
    if (pending !== undefined) {
      this.#pending.delete(toolCallId)
      return [{ type: "tool-input-available", toolCallId, toolName: pending.capability, input: inputOf(pending.input), dynamic }]
    }
    if (capability === undefined || preview === undefined) return []
    this.#named.add(toolCallId)
    return [...this.#closeText(), { type: "tool-input-available", toolCallId, toolName: capability, input: inputOf(preview), dynamic }]
  }
}

/** What became of one approval a useChat request answered, named by its call. */
export type ApprovalAnswer = { readonly toolCallId: string } & ApprovalResolution

/**
 * The stream that answers a request resolving approvals: it continues the assistant message that
 * asked them. A denial is `tool-output-denied`; an approved call's execution is its output.
 */
export const approvalAnswerChunks = (messageId: string, answers: ReadonlyArray<ApprovalAnswer>): ReadonlyArray<UiChunk> => [
  { type: "start", messageId },
  ...answers.map((answer): UiChunk => {
    const { toolCallId } = answer
    if ("refused" in answer) return { type: "tool-output-error", toolCallId, errorText: reasonOf(answer.refused), dynamic }
    const { execution } = answer
    if (execution.status === "denied") return { type: "tool-output-denied", toolCallId }
    if (execution.status === "failed") return { type: "tool-output-error", toolCallId, errorText: execution.reason ?? "failed", dynamic }
    return { type: "tool-output-available", toolCallId, output: execution, dynamic }
  }),
  { type: "finish", finishReason: "stop" }
]
