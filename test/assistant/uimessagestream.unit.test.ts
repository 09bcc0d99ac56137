/**
 * The UI message stream mapping (src/assistant/UiMessageStream.ts) as given events, then chunks:
 * what the offline model's turns do not show end to end (parallel parked calls, a call whose input
 * did not stream, a failure, a stop) and the chunks answering approvals.
 */
import { describe, expect, it } from "vitest"
import type { TurnOutcome } from "../../src/assistant/ChatEvents.ts"
import { approvalAnswerChunks, UiMessageStream } from "../../src/assistant/UiMessageStream.ts"
import type { ChatEvent, TurnResult } from "../../src/platform/Wire.ts"

const mapped = (events: ReadonlyArray<ChatEvent>, outcome?: TurnOutcome) => {
  const stream = new UiMessageStream()
  return [...events.flatMap((event) => stream.event(event)), ...(outcome === undefined ? [] : stream.end(outcome))]
}

const result = (stopped: boolean): TurnOutcome => ({
  result: { conversationId: "c", conversationPublicId: "cnv_x", userMessageId: "u", assistantMessageId: "a", runId: "tse_1", reply: "", parkedCards: [], toolCalls: [], stopped } satisfies TurnResult
})

const usage = { promptTokens: 3, completionTokens: 4, totalTokens: 7 }

describe("a turn's events as UI message chunks", () => {
  it("opens a text part at the first text and closes it at the step's end; the usage goes in finish", () => {
    expect(
      mapped(
        [
          { type: "run", runId: "tse_1" },
          { type: "step-start", stepIndex: 0 },
          { type: "text", text: "a" },
          { type: "text", text: "b" },
          { type: "step-finish", stepIndex: 0 },
          { type: "step-start", stepIndex: 1 },
          { type: "text", text: "c" },
          { type: "step-finish", stepIndex: 1 },
          { type: "usage", usage }
        ],
        result(false)
      )
    ).toEqual([
      { type: "start", messageId: "tse_1", messageMetadata: { runId: "tse_1" } },
      { type: "start-step" },
      { type: "text-start", id: "text-1" },
      { type: "text-delta", id: "text-1", delta: "a" },
      { type: "text-delta", id: "text-1", delta: "b" },
      { type: "text-end", id: "text-1" },
      { type: "finish-step" },
      { type: "start-step" },
      { type: "text-start", id: "text-2" },
      { type: "text-delta", id: "text-2", delta: "c" },
      { type: "text-end", id: "text-2" },
      { type: "finish-step" },
      { type: "finish", finishReason: "stop", messageMetadata: { usage, stopped: false } }
    ])
  })

  it("two parked calls of one capability: each approval goes to the call whose input it previews, whatever the order", () => {
    const chunks = mapped([
      { type: "tool-input-start", toolCallId: "call-a", capability: "node.delete" },
      { type: "tool-input-delta", toolCallId: "call-a", delta: '{"nodeId": "a"}' },
      { type: "tool-input-start", toolCallId: "call-b", capability: "node.delete" },
      { type: "tool-input-delta", toolCallId: "call-b", delta: '{"nodeId":"b"}' },
      { type: "approval-required", approvalId: "apr_b", capability: "node.delete", inputPreview: '{"nodeId":"b"}', riskLevel: "medium", expiresAt: "2026-01-01T00:00:00.000Z" },
      { type: "approval-required", approvalId: "apr_a", capability: "node.delete", inputPreview: '{"nodeId":"a"}', riskLevel: "medium", expiresAt: "2026-01-01T00:00:00.000Z" }
    ])
    expect(chunks.slice(4)).toEqual([
      { type: "tool-input-available", toolCallId: "call-b", toolName: "node.delete", input: { nodeId: "b" }, dynamic: true },
      { type: "tool-approval-request", approvalId: "apr_b", toolCallId: "call-b" },
      { type: "tool-input-available", toolCallId: "call-a", toolName: "node.delete", input: { nodeId: "a" }, dynamic: true },
      { type: "tool-approval-request", approvalId: "apr_a", toolCallId: "call-a" }
    ])
  })

  it("a call whose input did not stream is named from its preview; an output for a call never named is left out", () => {
    expect(
      mapped([
        { type: "tool-call-start", toolCallId: "call-1", capability: "system.ping", inputPreview: "{}", riskLevel: "low" },
        { type: "tool-call-end", toolCallId: "call-1", status: "completed", durationMs: 1, output: { pong: true } },
        { type: "tool-call-end", toolCallId: "call-unknown", status: "failed", durationMs: 0, errorReason: "InvalidToolInputError" }
      ])
    ).toEqual([
      { type: "tool-input-available", toolCallId: "call-1", toolName: "system.ping", input: {}, dynamic: true },
      { type: "tool-output-available", toolCallId: "call-1", output: { pong: true }, dynamic: true }
    ])
  })

  it("a question is one data-question part, updated as it ends, and its ask_user call gets an output", () => {
    expect(
      mapped([
        { type: "tool-input-start", toolCallId: "call-q", capability: "ask_user" },
        { type: "tool-input-delta", toolCallId: "call-q", delta: '{"question":"Which?"}' },
        { type: "question", id: "qst_1", question: "Which?", options: ["a"] },
        { type: "question-end", id: "qst_1", status: "closed", reason: "timeout" }
      ]).slice(2)
    ).toEqual([
      { type: "tool-input-available", toolCallId: "call-q", toolName: "ask_user", input: { question: "Which?" }, dynamic: true },
      { type: "data-question", id: "qst_1", data: { question: "Which?", options: ["a"], status: "open" } },
      { type: "tool-output-available", toolCallId: "call-q", output: { status: "closed" }, dynamic: true },
      { type: "data-question", id: "qst_1", data: { question: "Which?", options: ["a"], status: "closed", reason: "timeout" } }
    ])
  })

  it("a stopped turn says so with abort before finish; a failed one ends with error, then finish", () => {
    expect(mapped([{ type: "text", text: "par" }], result(true)).slice(-3)).toEqual([
      { type: "text-end", id: "text-1" },
      { type: "abort", reason: "stopped" },
      { type: "finish", finishReason: "other", messageMetadata: { stopped: true } }
    ])
    expect(mapped([{ type: "usage", usage }], { failure: { code: "model_call_failed", reason: null, message: "the model call failed" } })).toEqual([
      { type: "error", errorText: "the model call failed" },
      { type: "finish", finishReason: "error", messageMetadata: { usage } }
    ])
  })
})

describe("approvals answered on the next request", () => {
  it("continue the message that asked them: approved is the execution, denied is output-denied, a failure or a refusal an output error", () => {
    expect(
      approvalAnswerChunks("msg-1", [
        { toolCallId: "a", execution: { status: "succeeded", runId: "tse_2" } },
        { toolCallId: "b", execution: { status: "denied" } },
        { toolCallId: "c", execution: { status: "failed", runId: "tse_3", reason: "node_not_found" } },
        { toolCallId: "d", refused: { code: "conflict", reason: "approval_expired", message: "this approval expired or was already answered" } }
      ])
    ).toEqual([
      { type: "start", messageId: "msg-1" },
      { type: "tool-output-available", toolCallId: "a", output: { status: "succeeded", runId: "tse_2" }, dynamic: true },
      { type: "tool-output-denied", toolCallId: "b" },
      { type: "tool-output-error", toolCallId: "c", errorText: "node_not_found", dynamic: true },
      { type: "tool-output-error", toolCallId: "d", errorText: "approval_expired", dynamic: true },
      { type: "finish", finishReason: "stop" }
    ])
  })
})
