/**
 * AG-UI 1.0 events (the types of @ag-ui/core, encoded for SSE by @ag-ui/encoder) from a turn's typed
 * events (src/platform/Wire.ts) and its outcome, and from the approvals a resumed run answered. No
 * turn logic lives here: the mapper keeps only what the protocol needs and the events leave out (the
 * open text message; which calls started, and which ended their input; the approvals the turn parked,
 * which end the run as its interrupts).
 *
 * An approval's interrupt is named `<approvalId>:<toolCallId>`: a resume entry answers an interrupt
 * by its id alone, and the run that answers it names the call its result belongs to.
 */
import { type AGUIEvent, EventType, type Interrupt, PROTOCOL_VERSION, type TokenUsage } from "@ag-ui/core"
import { EventEncoder } from "@ag-ui/encoder"
import { errorBody } from "../platform/Failures.ts"
import type { ChatEvent, Usage } from "../platform/Wire.ts"
import type { TurnOutcome } from "./ChatEvents.ts"
import type { ApprovalResolution } from "./ChatThread.ts"

/**
 * The CUSTOM event's name for a question the agent asked (and, with its status, for its end). Not an
 * interrupt: the turn waits for the answer (`assistant/question/answer`) with the run still open.
 */
export const QUESTION_EVENT = "question"

/** The interrupt's reason for a parked tool call. */
export const APPROVAL_INTERRUPT = "tool_approval"

const encoder = new EventEncoder()

/** The SSE framing of one event (`data: <json>` and a blank line). */
export const encodeAgUiEvent = (event: AGUIEvent): string => encoder.encodeSSE(event)

/** The interrupt id of an approval parked on a call. */
const interruptIdOf = (approvalId: string, toolCallId: string) => `${approvalId}:${toolCallId}`

/** The approval and the call an interrupt id names; undefined for an id this route did not give. */
export const approvalOfInterrupt = (interruptId: string): { readonly approvalId: string; readonly toolCallId: string } | undefined => {
  const at = interruptId.indexOf(":")
  if (!interruptId.startsWith("apr_") || at < 0) return undefined
  return { approvalId: interruptId.slice(0, at), toolCallId: interruptId.slice(at + 1) }
}

/** The turn's usage in AG-UI's accounting: prompt tokens are its input, completion tokens its output. */
const tokenUsageOf = (usage: Usage): TokenUsage => ({ inputTokens: usage.promptTokens, outputTokens: usage.completionTokens, totalTokens: usage.totalTokens })

/** One run: who it is, as the request named it. */
export interface AgUiRun {
  readonly threadId: string
  readonly runId: string
}

const runStarted = (run: AgUiRun): AGUIEvent => ({ type: EventType.RUN_STARTED, threadId: run.threadId, runId: run.runId, protocolVersion: PROTOCOL_VERSION })

/**
 * A call whose TOOL_CALL_START went out; `ended` once its input is whole (TOOL_CALL_END), `answered`
 * once its result went out, `parked` once an approval holds it (its result is the resuming run's).
 */
interface StartedCall {
  readonly capability: string
  ended: boolean
  answered: boolean
  parked: boolean
}

/** One turn's run: `event` for each of the turn's events in order, then `end` with its outcome. */
export class AgUiStream {
  #textId: string | undefined = undefined
  #texts = 0
  readonly #calls = new Map<string, StartedCall>()
  readonly #interrupts: Array<Interrupt> = []
  /** The ask_user call of each question asked. */
  readonly #questionCalls = new Map<string, string>()
  /** The turn's usage, told once as it ends: RUN_FINISHED's. */
  #usage: Usage | undefined = undefined

  constructor(private readonly run: AgUiRun) {}

  event(event: ChatEvent): ReadonlyArray<AGUIEvent> {
    switch (event.type) {
      case "run":
        return [{ ...runStarted(this.run), metadata: { turnRunId: event.runId } }]
      case "text":
        if (event.text === "") return []
        return [...this.#openText(), { type: EventType.TEXT_MESSAGE_CONTENT, messageId: this.#textId!, delta: event.text }]
      case "tool-input-start":
        return this.#startCall(event.toolCallId, event.capability, undefined)
      case "tool-input-delta":
        if (event.delta === "" || this.#calls.get(event.toolCallId)?.ended !== false) return []
        return [{ type: EventType.TOOL_CALL_ARGS, toolCallId: event.toolCallId, delta: event.delta }]
      case "tool-call-start":
        return [...this.#startCall(event.toolCallId, event.capability, event.inputPreview), ...this.#endCall(event.toolCallId)]
      case "tool-call-end": {
        // a call never named here has nothing to answer; an ask_user call was answered by its question's end
        if (this.#calls.get(event.toolCallId)?.answered !== false) return []
        // a failed call's output is the one error body (src/platform/Failures.ts), as on REST and MCP
        return [...this.#endCall(event.toolCallId), this.#result(event.toolCallId, event.output ?? null)]
      }
      case "approval-required": {
        const toolCallId = this.#unansweredCallOf(event.capability) ?? event.approvalId
        this.#interrupts.push({
          id: interruptIdOf(event.approvalId, toolCallId),
          reason: APPROVAL_INTERRUPT,
          message: `Approve ${event.capability} ${event.inputPreview}? (risk: ${event.riskLevel})`,
          toolCallId,
          expiresAt: event.expiresAt,
          responseSchema: { type: "object", properties: { approved: { type: "boolean" }, note: { type: "string" } }, required: ["approved"] }
        })
        const started = this.#startCall(toolCallId, event.capability, event.inputPreview)
        this.#calls.get(toolCallId)!.parked = true
        return [...started, ...this.#endCall(toolCallId)]
      }
      case "question": {
        // the ask_user call that asked: its input is whole now, its result the question's end
        const toolCallId = this.#unansweredCallOf("ask_user")
        if (toolCallId !== undefined) this.#questionCalls.set(event.id, toolCallId)
        const call = toolCallId === undefined ? [] : this.#endCall(toolCallId)
        return [...this.#closeText(), ...call, { type: EventType.CUSTOM, name: QUESTION_EVENT, value: { id: event.id, question: event.question, options: event.options, status: "open" } }]
      }
      case "question-end": {
        const toolCallId = this.#questionCalls.get(event.id)
        const call = this.#calls.get(toolCallId ?? "")
        const result: ReadonlyArray<AGUIEvent> = toolCallId === undefined || call === undefined || call.answered ? [] : [this.#result(toolCallId, { status: event.status })]
        return [...result, { type: EventType.CUSTOM, name: QUESTION_EVENT, value: { id: event.id, status: event.status, ...(event.reason === undefined ? {} : { reason: event.reason }) } }]
      }
      case "usage":
        this.#usage = event.usage
        return []
      default:
        // reasoning and steps have no AG-UI event here; a failure ends the run with RUN_ERROR
        return []
    }
  }

  /**
   * The run's end: RUN_ERROR for a failure; else RUN_FINISHED, cancelled when stopped, an interrupt
   * when calls wait for approval, with the turn's usage (summed over its model calls: one entry).
   */
  end(outcome: TurnOutcome): ReadonlyArray<AGUIEvent> {
    // a run ends no call still taking its input (one the turn left as it stopped or failed)
    const closed = [...this.#closeText(), ...[...this.#calls.keys()].flatMap((toolCallId) => this.#endCall(toolCallId))]
    if ("failure" in outcome) {
      return [...closed, { type: EventType.RUN_ERROR, message: outcome.failure.message, ...(outcome.failure.code === null ? {} : { code: outcome.failure.code }) }]
    }
    const usage = this.#usage === undefined ? {} : { usage: [tokenUsageOf(this.#usage)] }
    const finished = { type: EventType.RUN_FINISHED, threadId: this.run.threadId, runId: this.run.runId, ...usage } as const
    if (outcome.result.stopped) return [...closed, { ...finished, outcome: { type: "cancelled" } }]
    if (this.#interrupts.length > 0) return [...closed, { ...finished, outcome: { type: "interrupt", interrupts: this.#interrupts } }]
    return [...closed, { ...finished, result: { reply: outcome.result.reply }, outcome: { type: "success" } }]
  }

  #result(toolCallId: string, output: unknown): AGUIEvent {
    this.#calls.get(toolCallId)!.answered = true
    return { type: EventType.TOOL_CALL_RESULT, messageId: `result-${toolCallId}`, toolCallId, content: JSON.stringify(output), role: "tool" }
  }

  #openText(): ReadonlyArray<AGUIEvent> {
    if (this.#textId !== undefined) return []
    this.#textId = `${this.run.runId}-text-${++this.#texts}`
    return [{ type: EventType.TEXT_MESSAGE_START, messageId: this.#textId, role: "assistant" }]
  }

  #closeText(): ReadonlyArray<AGUIEvent> {
    if (this.#textId === undefined) return []
    const messageId = this.#textId
    this.#textId = undefined
    return [{ type: EventType.TEXT_MESSAGE_END, messageId }]
  }

  /** TOOL_CALL_START once per call; a call whose input did not stream gets the turn's preview of it as its arguments. */
  #startCall(toolCallId: string, capability: string, preview: string | undefined): ReadonlyArray<AGUIEvent> {
    if (this.#calls.has(toolCallId)) return []
    this.#calls.set(toolCallId, { capability, ended: false, answered: false, parked: false })
    const args: ReadonlyArray<AGUIEvent> = preview === undefined || preview === "" ? [] : [{ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: preview }]
    return [...this.#closeText(), { type: EventType.TOOL_CALL_START, toolCallId, toolCallName: capability }, ...args]
  }

  #endCall(toolCallId: string): ReadonlyArray<AGUIEvent> {
    const call = this.#calls.get(toolCallId)
    if (call === undefined || call.ended) return []
    call.ended = true
    return [{ type: EventType.TOOL_CALL_END, toolCallId }]
  }

  /** The first call of this capability neither answered nor parked: the one an approval parks or a question asks by. */
  #unansweredCallOf(capability: string): string | undefined {
    return [...this.#calls].find(([, call]) => call.capability === capability && !call.answered && !call.parked)?.[0]
  }
}

/** What became of one approval a resumed run answered, named by its call. */
export type ResumeAnswer = { readonly toolCallId: string } & ApprovalResolution

/**
 * The run that answers interrupts: each approved call's execution (spec 2.4) as its result, a
 * denial as `{"status":"denied"}`, a refused resolve as the one error body.
 */
export const resumeAnswerEvents = (run: AgUiRun, answers: ReadonlyArray<ResumeAnswer>): ReadonlyArray<AGUIEvent> => [
  runStarted(run),
  ...answers.map((answer): AGUIEvent => ({
    type: EventType.TOOL_CALL_RESULT,
    messageId: `result-${answer.toolCallId}`,
    toolCallId: answer.toolCallId,
    content: JSON.stringify("refused" in answer ? errorBody(answer.refused) : answer.execution),
    role: "tool"
  })),
  { type: EventType.RUN_FINISHED, threadId: run.threadId, runId: run.runId, outcome: { type: "success" } }
]
