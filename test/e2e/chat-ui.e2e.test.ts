/**
 * The AI SDK UI message stream over real HTTP with the built-in offline model, read by the SDK's
 * own client: `DefaultChatTransport` (what useChat sends and reads) and `readUIMessageStream`. A
 * turn's answer, tool calls, approvals (answered on the next request), questions, stop and resume;
 * the message it builds says what the SSE turn's result says.
 */
import { randomUUID } from "node:crypto"
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { UiDataTypes, UiMessageMetadata } from "../../src/assistant/UiMessageStream.ts"
import { chatUrl, postJson, streamChat } from "../support/chat.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call, createNote } from "./client.ts"

type ChatMessage = UIMessage<UiMessageMetadata, UiDataTypes>

let node: TestNode
let transport: DefaultChatTransport<ChatMessage>

beforeAll(async () => {
  node = await startTestNode()
  transport = new DefaultChatTransport<ChatMessage>({ api: chatUrl(node, "chat/ui"), headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}` } })
})
afterAll(async () => {
  await node?.stop()
})

const userMessage = (text: string): ChatMessage => ({ id: randomUUID(), role: "user", parts: [{ type: "text", text }] })

/** Reads a UI message stream to its end: the message it built, each snapshot going to `onMessage`. */
const readMessage = async (stream: ReadableStream<any>, onMessage: (message: ChatMessage) => void = () => {}, message?: ChatMessage) => {
  let last: ChatMessage | undefined
  const errors: Array<unknown> = []
  for await (const snapshot of readUIMessageStream<ChatMessage>({ stream, message, onError: (error) => errors.push(error) })) {
    last = snapshot
    onMessage(snapshot)
  }
  return { message: last!, errors }
}

/** Sends the chat's messages as useChat does and reads the answer. */
const send = async (chatId: string, messages: Array<ChatMessage>, options: { onMessage?: (message: ChatMessage) => void; abortSignal?: AbortSignal } = {}) => {
  const stream = await transport.sendMessages({ chatId, messages, trigger: "submit-message", messageId: undefined, abortSignal: options.abortSignal })
  const last = messages.at(-1)!
  return readMessage(stream, options.onMessage, last.role === "assistant" ? structuredClone(last) : undefined)
}

const textOf = (message: ChatMessage) => message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")

const toolParts = (message: ChatMessage) => message.parts.flatMap((part) => (part.type === "dynamic-tool" ? [part] : []))

const until = (predicate: () => boolean, timeoutMs = 10_000) =>
  new Promise<void>((resolve, reject) => {
    const started = Date.now()
    const check = () => (predicate() ? resolve() : Date.now() - started > timeoutMs ? reject(new Error("timed out")) : setTimeout(check, 20))
    check()
  })

describe("a turn as a UI message stream", () => {
  it("answers with the protocol's header and [DONE]; the message's text and usage are the SSE turn's", async () => {
    const sse = await streamChat(node, { content: "hello there" })
    const response = await fetch(chatUrl(node, "chat/ui"), {
      method: "POST",
      headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}`, "content-type": "application/json" },
      body: JSON.stringify({ id: randomUUID(), messages: [userMessage("hello there")], trigger: "submit-message" })
    })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1")
    const lines = (await response.text()).split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6))
    expect(lines.at(-1)).toBe("[DONE]")
    const chunks = lines.slice(0, -1).map((line) => JSON.parse(line))
    expect(chunks[0]).toMatchObject({ type: "start", messageMetadata: { runId: expect.stringMatching(/^tse_/) } })
    expect(chunks.at(-1)).toMatchObject({ type: "finish", finishReason: "stop" })
    expect(chunks.map((c) => c.type)).toEqual(expect.arrayContaining(["start-step", "reasoning-start", "reasoning-delta", "reasoning-end", "text-start", "text-delta", "text-end", "finish-step"]))

    const { message, errors } = await send(randomUUID(), [userMessage("hello there")])
    expect(errors).toEqual([])
    expect(message.role).toBe("assistant")
    expect(textOf(message)).toBe(sse.done.reply)
    expect(message.parts.some((part) => part.type === "reasoning" && part.text.startsWith("Reading the message."))).toBe(true)
    expect(message.metadata?.usage).toEqual(sse.events.find((e) => e.type === "usage").usage)
    expect(message.metadata?.stopped).toBe(false)
  })

  it("keeps the history by the chat id: the next message continues the same conversation", async () => {
    const chatId = randomUUID().slice(0, 16)
    const first = await send(chatId, [userMessage("remember teal")])
    const second = await send(chatId, [userMessage("remember teal"), first.message, userMessage("/memory")])
    expect(textOf(second.message)).toBe("I see 2 earlier messages. Summary: none.")
    const runs = await Promise.all([first, second].map((m) => postJson(node, "assistant/reply", { runId: m.message.metadata?.runId })))
    expect(runs.map((r) => r.body.runStatus)).toEqual(["finished", "finished"])
  })

  it("a tool call streams its input, then its output; the text is the SSE turn's", async () => {
    const sse = await streamChat(node, { content: "/tool system__ping {}" })
    const { message } = await send(randomUUID(), [userMessage("/tool system__ping {}")])
    expect(toolParts(message)).toEqual([expect.objectContaining({ toolName: "system.ping", state: "output-available", input: {}, output: { pong: true } })])
    expect(textOf(message)).toBe(sse.done.reply)
    expect(message.parts.filter((part) => part.type === "step-start")).toHaveLength(2)
  })
})

describe("approvals", () => {
  const makeNode = () => createNote(node)

  /** A turn that parks a delete, then the next request answering its approval as useChat's addToolApprovalResponse does. */
  const parkAndAnswer = async (approved: boolean) => {
    const nodeId = await makeNode()
    const chatId = randomUUID()
    const ask = userMessage(`/tool node__delete {"nodeId":"${nodeId}"}`)
    const { message } = await send(chatId, [ask])
    const [part] = toolParts(message)
    expect(part).toMatchObject({ toolName: "node.delete", state: "approval-requested", input: { nodeId }, approval: { id: expect.stringMatching(/^apr_/) } })
    const answered: ChatMessage = {
      ...message,
      parts: message.parts.map((p) => (p === part ? { ...part, state: "approval-responded" as const, approval: { id: part.approval!.id, approved, reason: approved ? undefined : "keep it" } } : p)) as ChatMessage["parts"]
    }
    const next = await send(chatId, [ask, answered])
    return { nodeId, approvalId: part.approval!.id, first: message, next: next.message }
  }

  it("an approval approved on the next request runs the call: its output is the execution", async () => {
    const { nodeId, first, next } = await parkAndAnswer(true)
    expect(next.id).toBe(first.id)
    expect(toolParts(next)).toEqual([expect.objectContaining({ state: "output-available", output: { status: "succeeded", runId: expect.stringMatching(/^tse_/) } })])
    expect((await call(node, "node.get", { nodeId })).status).toBe(404)
  })

  it("an approval denied shows as output-denied and runs nothing; it cannot be answered again", async () => {
    const { nodeId, approvalId, next } = await parkAndAnswer(false)
    expect(toolParts(next)).toEqual([expect.objectContaining({ state: "output-denied" })])
    expect((await call(node, "node.get", { nodeId })).status).toBe(200)
    const again = await postJson(node, "agent/approvals/resolve", { approvalId, decision: "approved" })
    expect(again.status).toBe(409)
  })
})

describe("questions, stop and resume", () => {
  it("a question is a data-question part, answered through the question route; the turn goes on", async () => {
    let questionId: string | undefined
    const answering = send(randomUUID(), [userMessage("/ask Which colour? | red | blue")], {
      onMessage: (message) => {
        const part = message.parts.find((p) => p.type === "data-question")
        if (part !== undefined && questionId === undefined) {
          questionId = part.id
          expect(part.data).toEqual({ question: "Which colour?", options: ["red", "blue"], status: "open" })
          void postJson(node, "assistant/question/answer", { questionId, answer: "blue" })
        }
      }
    })
    const { message } = await answering
    expect(questionId).toMatch(/^qst_/)
    expect(message.parts.filter((p) => p.type === "data-question")).toEqual([expect.objectContaining({ id: questionId, data: expect.objectContaining({ status: "answered" }) })])
    expect(toolParts(message)).toEqual([expect.objectContaining({ toolName: "ask_user", state: "output-available" })])
    expect(textOf(message)).toContain('Tool ask_user returned: {"answer":"blue"}')
  })

  it("stop ends the chat's running turn with its partial reply; with none running it finds none", async () => {
    const chatId = randomUUID()
    let text = ""
    const streaming = send(chatId, [userMessage("/long 60\n/slow 60")], { onMessage: (m) => void (text = textOf(m)) })
    await until(() => text.length > 0)
    const stopped = await postJson(node, `chat/ui/${chatId}/stop`, undefined)
    expect(stopped.body).toEqual({ found: true })
    const { message } = await streaming
    expect(message.metadata?.stopped).toBe(true)
    expect(textOf(message).split(" ").length).toBeLessThan(60)
    expect((await postJson(node, `chat/ui/${chatId}/stop`, undefined)).body).toEqual({ found: false })
  })

  it("a client that went away resumes the running turn by the chat id, from its start, to the same end; then 204", async () => {
    const chatId = randomUUID()
    const abort = new AbortController()
    let seen = ""
    await send(chatId, [userMessage("/long 60\n/slow 60")], {
      abortSignal: abort.signal,
      onMessage: (m) => {
        seen = textOf(m)
        if (seen.split(" ").length >= 6) abort.abort()
      }
    }).catch(() => undefined)
    expect(seen.split(" ").length).toBeLessThan(60)
    const stream = await transport.reconnectToStream({ chatId })
    expect(stream).not.toBeNull()
    const { message } = await readMessage(stream!)
    expect(textOf(message).startsWith(seen)).toBe(true)
    expect(textOf(message).split(" ")).toHaveLength(60)
    const reply = await postJson(node, "assistant/reply", { runId: message.metadata?.runId })
    expect(reply.body).toEqual({ runStatus: "finished", reply: { text: textOf(message) } })
    expect(await transport.reconnectToStream({ chatId })).toBeNull()
    expect((await postJson(node, "chat/ui/stream", { id: chatId })).status).toBe(204)
  })
})
