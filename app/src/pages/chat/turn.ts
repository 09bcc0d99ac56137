/**
 * The turn being streamed, as a small external store: the stream reader applies each event and
 * only the components showing the turn re-render (the page and the history do not, per chunk).
 *
 * Paint timing (the 50 ms requirement): each text event is marked `svc:text-arrived` (detail: its
 * number in the turn) when parsed; the streaming message marks `svc:text-painted` with the same
 * number once the DOM holding it has been painted. Both are cleared when a turn starts.
 */
import type { ChatEvent, TurnResult, Usage } from "../../../../src/platform/Wire.ts"
import { ApiError, type Place } from "../../api.ts"
import { type ChatRequest, streamTurn } from "./stream.ts"

export const TEXT_ARRIVED = "svc:text-arrived"
export const TEXT_PAINTED = "svc:text-painted"

export type Part =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "reasoning"; readonly id: string; readonly text: string; readonly durationMs: number | null }
  | {
      readonly kind: "tool"
      readonly toolCallId: string
      readonly capability: string
      readonly inputPreview: string
      /** As the stream told it (`completed` or `failed`), then as the turn result settles it (`denied`, `cancelled`). */
      readonly status: "running" | "completed" | "failed" | "denied" | "cancelled"
      readonly durationMs?: number
      readonly output?: unknown
      readonly errorReason?: string
    }
  | { readonly kind: "approval"; readonly approvalId: string; readonly capability: string; readonly inputPreview: string; readonly expiresAt: string }
  | {
      readonly kind: "question"
      readonly id: string
      readonly question: string
      readonly options: ReadonlyArray<string>
      /** When it arrived here (ms since the epoch): the five-minute wait counts from then. */
      readonly askedAt: number
      readonly status: "waiting" | "answered" | "closed"
      readonly reason?: "timeout" | "ended"
    }

/** The stream's `error` event. */
export type TurnFailure = Omit<Extract<ChatEvent, { readonly type: "error" }>, "type">

export interface TurnState {
  /** `sending` until the stream opens; `failed` after an error event, a refusal or a broken stream. */
  readonly phase: "sending" | "streaming" | "done" | "failed"
  readonly request: ChatRequest
  /** The attached files: their names as the person picked them, or how many (a retry from the history). */
  readonly files: ReadonlyArray<string> | number
  readonly runId: string | undefined
  readonly parts: ReadonlyArray<Part>
  /** Text events so far: the number the next paint mark carries. */
  readonly textEvents: number
  readonly usage: Usage | undefined
  readonly failure: TurnFailure | undefined
  readonly result: TurnResult | undefined
  /** The capability of each call whose input streamed: a call refused before it started ends with no start. */
  readonly inputs: Readonly<Record<string, string>>
}

type PartOf<K extends Part["kind"]> = Extract<Part, { readonly kind: K }>

/** The parts with each one of `kind` that `match` picks replaced by `change` of it. */
const replaceWhere = <K extends Part["kind"]>(parts: ReadonlyArray<Part>, kind: K, match: (part: PartOf<K>) => boolean, change: (part: PartOf<K>) => PartOf<K>) =>
  parts.map((part) => (part.kind === kind && match(part as PartOf<K>) ? change(part as PartOf<K>) : part))

/** The turn after one event. */
const reduce = (state: TurnState, event: ChatEvent): TurnState => {
  const parts = state.parts
  switch (event.type) {
    case "run":
      return { ...state, runId: event.runId }
    case "text": {
      const last = parts.at(-1)
      const next = last?.kind === "text" ? [...parts.slice(0, -1), { kind: "text" as const, text: last.text + event.text }] : [...parts, { kind: "text" as const, text: event.text }]
      return { ...state, parts: next, textEvents: state.textEvents + 1 }
    }
    case "reasoning-start":
      return { ...state, parts: [...parts, { kind: "reasoning", id: event.reasoningId, text: "", durationMs: null }] }
    case "reasoning-delta":
      return {
        ...state,
        parts: replaceWhere(parts, "reasoning", (p) => p.id === event.reasoningId, (p) => ({ ...p, text: p.text + event.text }))
      }
    case "reasoning-end":
      return {
        ...state,
        parts: replaceWhere(parts, "reasoning", (p) => p.id === event.reasoningId, (p) => ({ ...p, durationMs: event.durationMs }))
      }
    case "tool-call-start":
      return {
        ...state,
        parts: [...parts, { kind: "tool", toolCallId: event.toolCallId, capability: event.capability, inputPreview: event.inputPreview, status: "running" }]
      }
    case "tool-input-start":
      return { ...state, inputs: { ...state.inputs, [event.toolCallId]: event.capability } }
    case "tool-call-end": {
      const started = parts.some((p) => p.kind === "tool" && p.toolCallId === event.toolCallId)
      const capability = state.inputs[event.toolCallId]
      const shown: ReadonlyArray<Part> = started || capability === undefined
        ? parts
        : [...parts, { kind: "tool", toolCallId: event.toolCallId, capability, inputPreview: "", status: "running" }]
      return {
        ...state,
        parts: replaceWhere(shown, "tool", (p) => p.toolCallId === event.toolCallId, (p) => ({
          ...p,
          status: event.status,
          durationMs: event.durationMs,
          output: event.output,
          errorReason: event.errorReason
        }))
      }
    }
    case "approval-required":
      return {
        ...state,
        parts: [...parts, { kind: "approval", approvalId: event.approvalId, capability: event.capability, inputPreview: event.inputPreview, expiresAt: event.expiresAt }]
      }
    case "question":
      return {
        ...state,
        parts: [...parts, { kind: "question", id: event.id, question: event.question, options: event.options, askedAt: Date.now(), status: "waiting" }]
      }
    case "question-end":
      return {
        ...state,
        parts: replaceWhere(parts, "question", (p) => p.id === event.id, (p) => ({ ...p, status: event.status, reason: event.reason }))
      }
    case "usage":
      return { ...state, usage: event.usage }
    case "error":
      return { ...state, failure: { message: event.message, code: event.code, reason: event.reason } }
    default:
      // step and tool-input deltas: the tool call shows once it starts (or ends, refused before it started)
      return state
  }
}

/** The stream tells a call's end as `completed` or `failed` (spec 6.1); the turn result says
 * whether a failed one was refused (`denied`) or cut off by a stop (`cancelled`). */
const settledCalls = (parts: ReadonlyArray<Part>, result: TurnResult): ReadonlyArray<Part> => {
  const outcomes = new Map(result.toolCalls.map((call) => [call.toolCallId, call.outcome] as const))
  return parts.map((part) => {
    if (part.kind !== "tool") return part
    const outcome = outcomes.get(part.toolCallId)
    return outcome === "denied" || outcome === "cancelled" ? { ...part, status: outcome } : part
  })
}

export class LiveTurn {
  #state: TurnState
  readonly #listeners = new Set<() => void>()

  constructor(request: ChatRequest, files: ReadonlyArray<string> | number) {
    this.#state = { phase: "sending", request, files, runId: undefined, parts: [], textEvents: 0, usage: undefined, failure: undefined, result: undefined, inputs: {} }
  }

  readonly subscribe = (listener: () => void) => {
    this.#listeners.add(listener)
    return () => void this.#listeners.delete(listener)
  }

  readonly getState = (): TurnState => this.#state

  #set(state: TurnState) {
    this.#state = state
    for (const listener of this.#listeners) listener()
  }

  /** Streams the turn to its end; resolves with its final state (never rejects). */
  async run(place: Place): Promise<TurnState> {
    performance.clearMarks(TEXT_ARRIVED)
    performance.clearMarks(TEXT_PAINTED)
    try {
      const end = await streamTurn(place, this.#state.request, (event) => {
        if (event.type === "text") performance.mark(TEXT_ARRIVED, { detail: this.#state.textEvents + 1 })
        const next = reduce(this.#state, event)
        this.#set(next.phase === "sending" ? { ...next, phase: "streaming" } : next)
      })
      if ("result" in end) this.#set({ ...this.#state, phase: "done", parts: settledCalls(this.#state.parts, end.result), result: end.result })
      else this.#set({ ...this.#state, phase: "failed", failure: this.#state.failure ?? { message: "the turn failed" } })
    } catch (error) {
      const failure = error instanceof ApiError ? { message: error.message, code: error.code, reason: error.reason } : { message: String(error) }
      this.#set({ ...this.#state, phase: "failed", failure })
    }
    return this.#state
  }
}
