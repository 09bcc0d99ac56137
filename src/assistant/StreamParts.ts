/**
 * The `ai` SDK's stream parts as the spec's events (3.2): steps, text, reasoning, tool input, and
 * calls that failed before reaching their tool. What the parts add up to across the turn's rounds
 * (its reply, its usage, its step count) is kept here.
 */
import type { TextStreamPart, ToolSet } from "ai"
import { Effect } from "effect"
import type { ChatEvent, Usage } from "../platform/Wire.ts"
import { errorBody, type FailureDescription } from "../platform/Failures.ts"
import { reasonOf, TurnAborted, TurnFailed } from "./AgentTools.ts"

const zeroUsage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 }

export interface StreamPartsTarget {
  readonly emit: (event: ChatEvent) => void
  readonly now: () => number
  readonly capabilityOf: (toolName: string) => string
  /** A call the model made of a tool not offered, with input its tool does not accept, or whose
   * tool threw: recorded, and answered with what failed, as the error table states it. */
  readonly toolFailed: (toolCallId: string, capability: string, error: unknown) => Pick<FailureDescription, "code" | "reason" | "message">
}

/** The turn's stream read so far, across its rounds. */
export class TurnStream {
  reply = ""
  usage: Usage = zeroUsage
  private stepIndex = 0

  constructor(private readonly target: StreamPartsTarget) {}

  addUsage(part: { readonly inputTokens?: number | undefined; readonly outputTokens?: number | undefined }): void {
    const promptTokens = this.usage.promptTokens + (part.inputTokens ?? 0)
    const completionTokens = this.usage.completionTokens + (part.outputTokens ?? 0)
    this.usage = { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens }
  }

  /** Emits one round's parts as events; succeeds with the round's text, fails with what broke the round. */
  readRound(parts: AsyncIterable<TextStreamPart<ToolSet>>): Effect.Effect<string, unknown> {
    return Effect.tryPromise({
      try: async () => {
        const { emit, now, capabilityOf } = this.target
        let roundReply = ""
        const reasoningStarted = new Map<string, number>()
        for await (const part of parts) {
          switch (part.type) {
            case "start-step":
              emit({ type: "step-start", stepIndex: this.stepIndex })
              break
            case "finish-step":
              this.addUsage(part.usage)
              emit({ type: "step-finish", stepIndex: this.stepIndex++ })
              break
            case "text-delta":
              if (part.text === "") break
              this.reply += part.text
              roundReply += part.text
              emit({ type: "text", text: part.text })
              break
            case "reasoning-start": {
              const reasoningId = `${this.stepIndex}:${part.id}`
              reasoningStarted.set(reasoningId, now())
              emit({ type: "reasoning-start", reasoningId })
              break
            }
            case "reasoning-delta":
              emit({ type: "reasoning-delta", reasoningId: `${this.stepIndex}:${part.id}`, text: part.text })
              break
            case "reasoning-end": {
              const reasoningId = `${this.stepIndex}:${part.id}`
              emit({ type: "reasoning-end", reasoningId, durationMs: Math.max(0, now() - (reasoningStarted.get(reasoningId) ?? now())) })
              break
            }
            case "tool-input-start":
              emit({ type: "tool-input-start", toolCallId: part.id, capability: capabilityOf(part.toolName) })
              break
            case "tool-input-delta":
              emit({ type: "tool-input-delta", toolCallId: part.id, delta: part.delta })
              break
            case "tool-error": {
              const error = part.error
              if (error instanceof TurnFailed || error instanceof TurnAborted) throw error
              const failure = this.target.toolFailed(part.toolCallId, capabilityOf(part.toolName), error)
              emit({ type: "tool-call-end", toolCallId: part.toolCallId, status: "failed", durationMs: 0, errorReason: reasonOf(failure), output: errorBody(failure) })
              break
            }
            case "error":
              throw part.error
            default:
              break
          }
        }
        return roundReply
      },
      catch: (error) => error
    })
  }
}
