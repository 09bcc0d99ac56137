/**
 * A real local HTTP server speaking OpenAI's chat-completions protocol, for the OpenAI-compatible
 * adapter: `POST <url>/chat/completions`, streamed as `chat.completion.chunk` SSE lines (`data:
 * {...}` then `data: [DONE]`) when the request asks for a stream, else one `chat.completion`.
 *
 * It records every request (tests assert on `reasoning_effort`, tools, messages, the key) and
 * plays scripted responses in order; with none left it answers `otherwise` (by default, it echoes
 * the last user message).
 */
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

export type ScriptedResponse =
  | { readonly kind: "text"; readonly text: string; readonly reasoning?: string }
  /** `arguments`: the JSON text of the call's input (an object is serialised). */
  | { readonly kind: "tool"; readonly name: string; readonly arguments: string | object }
  | { readonly kind: "error"; readonly status: number; readonly body: unknown }

export interface RecordedRequest {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The parsed JSON body. */
  readonly body: any
  /** The token usage the server reported for this request (streamed only when asked with `include_usage`); undefined for an error. */
  readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly total_tokens: number }
}

export interface OpenAiServer {
  /** The base URL to give the adapter, ending in `/v1`. */
  readonly url: string
  readonly requests: Array<RecordedRequest>
  /** Queues responses for the next requests, in order. */
  readonly script: (...responses: ReadonlyArray<ScriptedResponse>) => void
  readonly close: () => Promise<void>
}

/** The system prompt a recorded chat-completions request carried. */
export const systemOf = (request: RecordedRequest): string => request.body.messages.find((m: any) => m.role === "system")?.content ?? ""

const words = (text: string): Array<string> => text.split(/(?<=\s)/).filter((w) => w !== "")

const lastUserText = (body: any): string => {
  const last = [...(body.messages ?? [])].reverse().find((m: any) => m.role === "user")
  if (last === undefined) return ""
  if (typeof last.content === "string") return last.content
  return (last.content as Array<any>).flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")
}

const promptChars = (body: any): number =>
  (body.messages ?? []).reduce((sum: number, m: any) => sum + (typeof m.content === "string" ? m.content.length : JSON.stringify(m.content ?? "").length), 0)

const usageOf = (body: any, completionChars: number, reasoningChars: number) => {
  const prompt = Math.ceil(promptChars(body) / 4)
  const completion = Math.ceil(completionChars / 4)
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    completion_tokens_details: { reasoning_tokens: Math.ceil(reasoningChars / 4) }
  }
}

export interface OpenAiServerOptions {
  /** The response to a request when no scripted one is left. */
  readonly otherwise?: (body: any) => ScriptedResponse
}

export const startOpenAiServer = async (options: OpenAiServerOptions = {}): Promise<OpenAiServer> => {
  const requests: Array<RecordedRequest> = []
  const queue: Array<ScriptedResponse> = []
  let served = 0

  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const path = request.url ?? "/"
      let body: any
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      } catch {
        response.writeHead(400, { "content-type": "application/json" })
        response.end(JSON.stringify({ error: { message: "the body is not JSON", type: "invalid_request_error" } }))
        return
      }
      const recorded: { -readonly [K in keyof RecordedRequest]: RecordedRequest[K] } = { path, headers: request.headers, body }
      requests.push(recorded)
      if (request.method !== "POST" || !path.endsWith("/chat/completions")) {
        response.writeHead(404, { "content-type": "application/json" })
        response.end(JSON.stringify({ error: { message: `no route ${request.method} ${path}`, type: "invalid_request_error" } }))
        return
      }
      const scripted = queue.shift() ?? options.otherwise?.(body) ?? { kind: "text", text: lastUserText(body) }
      if (scripted.kind === "error") {
        response.writeHead(scripted.status, { "content-type": "application/json" })
        response.end(typeof scripted.body === "string" ? scripted.body : JSON.stringify(scripted.body))
        return
      }
      served++
      const id = `chatcmpl-${served}`
      const model = body.model
      const toolCall = scripted.kind === "tool"
        ? { id: `call_${served}`, name: scripted.name, arguments: typeof scripted.arguments === "string" ? scripted.arguments : JSON.stringify(scripted.arguments) }
        : undefined
      const text = scripted.kind === "text" ? scripted.text : ""
      const reasoning = scripted.kind === "text" ? scripted.reasoning ?? "" : ""
      const finishReason = toolCall === undefined ? "stop" : "tool_calls"
      const usage = usageOf(body, text.length + reasoning.length + (toolCall?.arguments.length ?? 0), reasoning.length)
      recorded.usage = usage

      if (body.stream !== true) {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({
          id,
          object: "chat.completion",
          created: 1_700_000_000 + served,
          model,
          choices: [{
            index: 0,
            message: {
              role: "assistant",
              content: toolCall === undefined ? text : null,
              ...(reasoning === "" ? {} : { reasoning_content: reasoning }),
              ...(toolCall === undefined ? {} : { tool_calls: [{ id: toolCall.id, type: "function", function: { name: toolCall.name, arguments: toolCall.arguments } }] })
            },
            finish_reason: finishReason
          }],
          usage
        }))
        return
      }

      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
      const send = (delta: object | null, extra: { finish_reason?: string; usage?: object } = {}) => {
        const chunk = {
          id,
          object: "chat.completion.chunk",
          created: 1_700_000_000 + served,
          model,
          choices: delta === null ? [] : [{ index: 0, delta, finish_reason: extra.finish_reason ?? null }],
          ...(extra.usage === undefined ? {} : { usage: extra.usage })
        }
        response.write(`data: ${JSON.stringify(chunk)}\n\n`)
      }
      send({ role: "assistant", content: "" })
      for (const piece of words(reasoning)) send({ reasoning_content: piece })
      for (const piece of words(text)) send({ content: piece })
      if (toolCall !== undefined) {
        send({ tool_calls: [{ index: 0, id: toolCall.id, type: "function", function: { name: toolCall.name, arguments: "" } }] })
        const size = Math.max(1, Math.ceil(toolCall.arguments.length / 3))
        for (let i = 0; i < toolCall.arguments.length; i += size) {
          send({ tool_calls: [{ index: 0, function: { arguments: toolCall.arguments.slice(i, i + size) } }] })
        }
      }
      send({}, { finish_reason: finishReason })
      if (body.stream_options?.include_usage === true) send(null, { usage })
      response.end("data: [DONE]\n\n")
    })
  })

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...responses) => {
      queue.push(...responses)
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      })
  }
}
