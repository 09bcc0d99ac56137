/**
 * A chat client for the end-to-end suites: real HTTP, the stream read with a real SSE parser
 * (`eventsource-parser`), every data event, named event and comment kept in arrival order.
 */
import { createParser } from "eventsource-parser"
import type { TestNode } from "./platform.ts"

export interface StreamedTurn {
  readonly status: number
  readonly headers: Headers
  /** Parsed `data:` JSON objects of unnamed events, in order. */
  readonly events: Array<any>
  /** Everything in arrival order: `{kind: "data", data}`, `{kind: "named", event, data}`, `{kind: "comment", text}`; events with their SSE `id` when they had one. */
  readonly sequence: Array<{ kind: "data"; data: any; id?: string } | { kind: "named"; event: string; data: string; id?: string } | { kind: "comment"; text: string }>
  /** The `done` event's data: the turn result, or the text `[DONE]`. */
  readonly done: any
  /** The JSON body when the route answered before opening a stream. */
  readonly body: any
}

export interface ChatOptions {
  readonly key?: string | null
  readonly cookie?: string
  readonly orgSlug?: string
  readonly workspaceSlug?: string
  /** Called with each data event as it arrives, with its SSE `id` (the reader does not wait for it). */
  readonly onEvent?: (event: any, id: string | undefined) => void
  readonly signal?: AbortSignal
  readonly route?: "chat/stream" | "assistant/ask"
  /** A raw body instead of JSON of `body`. */
  readonly rawBody?: string
}

const headersFor = (node: TestNode, options: ChatOptions): Record<string, string> => {
  const headers: Record<string, string> = { "content-type": "application/json" }
  const key = options.key === undefined ? node.bootstrap.workspaceKey : options.key
  if (key !== null && options.cookie === undefined) headers.authorization = `Bearer ${key}`
  if (options.cookie !== undefined) headers.cookie = options.cookie
  return headers
}

export const chatUrl = (node: TestNode, route: string, options: Pick<ChatOptions, "orgSlug" | "workspaceSlug"> = {}) =>
  `${node.baseUrl}/v1/${options.orgSlug ?? node.bootstrap.orgSlug}/${options.workspaceSlug ?? node.bootstrap.workspaceSlug}/${route}`

/** POST chat/stream and read the stream to its end (or until the signal aborts). */
export const streamChat = async (node: TestNode, body: unknown, options: ChatOptions = {}): Promise<StreamedTurn> => {
  const response = await fetch(chatUrl(node, options.route ?? "chat/stream", options), {
    method: "POST",
    headers: headersFor(node, options),
    body: options.rawBody ?? JSON.stringify(body),
    signal: options.signal
  })
  return readTurnStream(response, options)
}

/** GET chat/turns/{turnId}/stream, with `Last-Event-ID` when given, and read the resumed stream to its end. */
export const resumeChat = async (node: TestNode, turnId: string, lastEventId: string | undefined, options: ChatOptions = {}): Promise<StreamedTurn> => {
  const headers = headersFor(node, options)
  delete headers["content-type"]
  if (lastEventId !== undefined) headers["last-event-id"] = lastEventId
  const response = await fetch(chatUrl(node, `chat/turns/${encodeURIComponent(turnId)}/stream`, options), { headers, signal: options.signal })
  return readTurnStream(response, options)
}

/** Reads a chat stream's response to its end (or until the signal aborts); a reply that is not a stream is kept as its JSON body. */
const readTurnStream = async (response: Response, options: ChatOptions): Promise<StreamedTurn> => {
  const turn: StreamedTurn = { status: response.status, headers: response.headers, events: [], sequence: [], done: undefined, body: undefined }
  if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    const text = await response.text()
    ;(turn as { body: any }).body = text === "" ? undefined : JSON.parse(text)
    return turn
  }
  const parser = createParser({
    onEvent: (message) => {
      if (message.event === undefined) {
        const data = JSON.parse(message.data)
        turn.events.push(data)
        turn.sequence.push({ kind: "data", data, ...(message.id === undefined ? {} : { id: message.id }) })
        options.onEvent?.(data, message.id)
      } else {
        turn.sequence.push({ kind: "named", event: message.event, data: message.data, ...(message.id === undefined ? {} : { id: message.id }) })
        if (message.event === "done") (turn as { done: any }).done = message.data === "[DONE]" ? "[DONE]" : JSON.parse(message.data)
      }
    },
    onComment: (text) => void turn.sequence.push({ kind: "comment", text })
  })
  const decoder = new TextDecoder()
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }))
  } catch (error) {
    if (!options.signal?.aborted) throw error
  }
  return turn
}

/** POST a JSON body to a workspace route of the assistant. */
export const postJson = async (node: TestNode, route: string, body: unknown, options: ChatOptions = {}) => {
  const response = await fetch(chatUrl(node, route, options), { method: "POST", headers: headersFor(node, options), body: options.rawBody ?? JSON.stringify(body) })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) }
}

/** Resolves once the predicate holds for an arriving event. */
export const waitForEvent = (events: Array<any>, predicate: (event: any) => boolean, timeoutMs = 10_000): Promise<any> =>
  new Promise((resolve, reject) => {
    const started = Date.now()
    const check = () => {
      const found = events.find(predicate)
      if (found !== undefined) return resolve(found)
      if (Date.now() - started > timeoutMs) return reject(new Error("event did not arrive"))
      setTimeout(check, 20)
    }
    check()
  })
