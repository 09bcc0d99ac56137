/**
 * The chat stream's events (spec 6.1) and the turn result (2.3): what a turn tells its sink, the SSE
 * writer or the ask route's collector. Deltas are not log events; they go straight to the sink.
 */
import type { Listener, Started } from "../platform/Relay.ts"
import { clipped } from "../platform/StorableText.ts"

export interface Usage {
  readonly promptTokens: number
  readonly completionTokens: number
  readonly totalTokens: number
}

export type RiskLevel = "low" | "medium" | "high"

export type ChatEvent =
  | { readonly type: "run"; readonly runId: string }
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "reasoning-start"; readonly reasoningId: string }
  | { readonly type: "reasoning-delta"; readonly reasoningId: string; readonly text: string }
  | { readonly type: "reasoning-end"; readonly reasoningId: string; readonly durationMs: number }
  | { readonly type: "step-start"; readonly stepIndex: number }
  | { readonly type: "step-finish"; readonly stepIndex: number }
  | { readonly type: "tool-input-start"; readonly toolCallId: string; readonly capability: string }
  | { readonly type: "tool-input-delta"; readonly toolCallId: string; readonly delta: string }
  | { readonly type: "tool-call-start"; readonly toolCallId: string; readonly capability: string; readonly inputPreview: string; readonly riskLevel: "low" }
  | {
      readonly type: "tool-call-end"
      readonly toolCallId: string
      readonly status: "completed" | "failed"
      readonly durationMs: number
      readonly output?: unknown
      readonly errorReason?: string
    }
  | {
      readonly type: "approval-required"
      readonly approvalId: string
      readonly capability: string
      readonly inputPreview: string
      readonly riskLevel: RiskLevel
      readonly expiresAt: string
    }
  | { readonly type: "question"; readonly id: string; readonly question: string; readonly options: ReadonlyArray<string> }
  | { readonly type: "question-end"; readonly id: string; readonly status: "answered" | "closed"; readonly reason?: "timeout" | "ended" }
  | { readonly type: "usage"; readonly usage: Usage }
  | { readonly type: "error"; readonly message: string; readonly code?: string; readonly reason?: string }

export type ToolCallOutcome = "completed" | "failed" | "denied" | "cancelled" | "parked"

export interface ToolCallRecord {
  readonly toolCallId: string
  readonly toolName: string
  readonly outcome: ToolCallOutcome
  readonly durationMs: number
  readonly approvalId?: string
}

export interface ParkedCard {
  readonly approvalId: string
  readonly capability: string
  readonly expiresAt: string
}

export interface TurnResult {
  readonly conversationId: string
  readonly conversationPublicId: string
  readonly userMessageId: string
  readonly assistantMessageId: string
  readonly runId: string
  readonly reply: string
  readonly parkedCards: ReadonlyArray<ParkedCard>
  readonly toolCalls: ReadonlyArray<ToolCallRecord>
  readonly stopped: boolean
}

/** A failure after the stream opened (7.2): one `error` event, then `done` with `[DONE]`. */
export interface TurnFailure {
  readonly code: string | null
  readonly reason: string | null
  readonly message: string
}

export type TurnOutcome = { readonly result: TurnResult } | { readonly failure: TurnFailure }

/** Where a turn's events go. `done` is called exactly once, last. */
export type TurnSink = Listener<ChatEvent, TurnOutcome>

/** A turn the chat capability started: the gateway frames its events. */
export type StartedTurn = Started<ChatEvent, TurnOutcome>

/** At most this many characters of a tool's input are shown in previews. */
const PREVIEW_CHARS = 200

export const previewOf = (input: unknown): string => clipped(JSON.stringify(input) ?? "", PREVIEW_CHARS)
