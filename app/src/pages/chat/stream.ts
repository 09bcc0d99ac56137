/**
 * One chat turn over `POST /v1/{org}/{ws}/chat/stream` (spec 4.1): fetch with a stream reader, the
 * SSE parsed by hand, each JSON event handed over the moment it is parsed. A refusal before the
 * stream opens (spec 7.1) is a JSON error and rejects as ApiError; a failure after it opened is an
 * `error` event, then `done` with `[DONE]` (7.2).
 */
import type { ChatEvent, TurnResult } from "../../../../src/platform/Wire.ts"
import { ApiError, type Place, readError } from "../../api.ts"
import { createSseReader } from "./sse.ts"

/** The chat request (spec 2.2) as this page sends it. */
export interface ChatRequest {
  readonly content: string
  readonly conversationId: string | null
  readonly turnId: string
  readonly attachments: ReadonlyArray<string>
  readonly tier?: string
  readonly effort?: string
}

/** How a stream ended: with the turn result, or `[DONE]` after an error event. */
export type StreamEnd = { readonly result: TurnResult } | { readonly failed: true }

const refusalOf = async (response: Response): Promise<ApiError> => {
  if (response.status === 429) {
    const seconds = Number(response.headers.get("retry-after"))
    const wait = Number.isFinite(seconds) && seconds > 0 ? `try again in ${seconds} second${seconds === 1 ? "" : "s"}` : "try again shortly"
    return new ApiError(429, "rate_limited", undefined, `this workspace sent too many chat requests; ${wait}`)
  }
  return readError(response)
}

/**
 * Sends `request` and reads the stream to its end, calling `onEvent` for each event as soon as it
 * is parsed. Resolves with how the stream ended; rejects with ApiError when the server refused the
 * turn or the connection broke before `done`.
 */
export const streamTurn = async (place: Place, request: ChatRequest, onEvent: (event: ChatEvent) => void): Promise<StreamEnd> => {
  let response: Response
  try {
    response = await fetch(`/v1/${encodeURIComponent(place.org)}/${encodeURIComponent(place.ws)}/chat/stream`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(request)
    })
  } catch {
    throw new ApiError(0, "network_error", undefined, "the server could not be reached; check your connection and try again")
  }
  if (!response.ok || response.body === null) throw await refusalOf(response)

  let end: StreamEnd | undefined
  const reader = createSseReader((message) => {
    if (message.event === undefined) onEvent(JSON.parse(message.data) as ChatEvent)
    else if (message.event === "done") end = message.data === "[DONE]" ? { failed: true } : { result: JSON.parse(message.data) as TurnResult }
  })
  const body = response.body.getReader()
  const decoder = new TextDecoder()
  try {
    for (;;) {
      const { done, value } = await body.read()
      if (done) break
      reader.feed(decoder.decode(value, { stream: true }))
    }
  } catch {
    // the connection broke: the turn goes on at the server (spec 3.2) and is found in the history
  }
  if (end === undefined) {
    throw new ApiError(0, "stream_broken", undefined, "the connection closed before the turn ended; the reply is saved in the conversation when the turn finishes")
  }
  return end
}
