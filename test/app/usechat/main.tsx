/**
 * A test page for the browser suite (test/app/usechat.browser.test.ts): the AI SDK's own `useChat`
 * against the platform's `chat/ui` route, as an application built on the SDK would use it. The chat
 * id, organization and workspace come from the query string, so a reload finds the same chat and
 * resumes its running turn (`resume: true`). Approvals are answered with the SDK's
 * `addToolApprovalResponse` (sent on the next request, `approvalsAnswered`); questions through the question route; the
 * stop button stops the client's request and the turn (the chat's stop route).
 */
import { type UIMessage, useChat } from "@ai-sdk/react"
import { DefaultChatTransport, isToolUIPart } from "ai"
import { type FormEvent, useMemo, useState } from "react"
import { createRoot } from "react-dom/client"

const query = new URLSearchParams(location.search)
const place = `/v1/${query.get("org")}/${query.get("ws")}`
const api = `${place}/chat/ui`
const chatId = query.get("chat") ?? "page-chat"

interface Metadata {
  readonly runId?: string
  readonly usage?: { readonly totalTokens: number }
  readonly stopped?: boolean
}

interface Question {
  readonly question: string
  readonly options: ReadonlyArray<string>
  readonly status: string
}

type Message = UIMessage<Metadata, { question: Question }>

/**
 * Sends the approvals once every one the last message asks for is answered. A parked call does not
 * hold the platform's turn, which answers on in a later step, so the SDK's own
 * `lastAssistantMessageIsCompleteWithApprovalResponses` (which reads the last step only) would not send.
 */
const approvalsAnswered = ({ messages }: { messages: Array<Message> }) => {
  const last = messages.at(-1)
  if (last?.role !== "assistant") return false
  const states = last.parts.filter(isToolUIPart).map((part) => part.state)
  return states.includes("approval-responded") && !states.includes("approval-requested")
}

const answerQuestion = (questionId: string, answer: string) =>
  fetch(`${place}/assistant/question/answer`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ questionId, answer }) })

const Part = ({ part, approve }: { part: Message["parts"][number]; approve: (id: string, approved: boolean) => void }) => {
  if (part.type === "text") return <p className="text">{part.text}</p>
  if (part.type === "data-question") {
    return (
      <section aria-label={`Question: ${part.data.question}`}>
        <p>{part.data.question} ({part.data.status})</p>
        {part.data.status === "open" && part.data.options.map((option) => (
          <button key={option} type="button" onClick={() => void answerQuestion(part.id!, option)}>{option}</button>
        ))}
      </section>
    )
  }
  if (!isToolUIPart(part) || part.type !== "dynamic-tool") return null
  return (
    <section aria-label={`Tool ${part.toolName}`}>
      <p>Tool {part.toolName}: {part.state}</p>
      {part.state === "output-available" && <pre aria-label="Tool output">{JSON.stringify(part.output)}</pre>}
      {part.state === "approval-requested" && (
        <>
          <button type="button" onClick={() => approve(part.approval.id, true)}>Approve</button>
          <button type="button" onClick={() => approve(part.approval.id, false)}>Deny</button>
        </>
      )}
    </section>
  )
}

const Chat = () => {
  const transport = useMemo(() => new DefaultChatTransport<Message>({ api }), [])
  const { messages, sendMessage, status, error, stop, addToolApprovalResponse } = useChat<Message>({
    id: chatId,
    transport,
    resume: true,
    sendAutomaticallyWhen: approvalsAnswered
  })
  const [input, setInput] = useState("")
  const submit = (event: FormEvent) => {
    event.preventDefault()
    void sendMessage({ text: input })
    setInput("")
  }
  const stopTurn = async () => {
    await stop()
    await fetch(`${api}/${encodeURIComponent(chatId)}/stop`, { method: "POST" })
  }
  const approve = (id: string, approved: boolean) => void addToolApprovalResponse({ id, approved, ...(approved ? {} : { reason: "not now" }) })
  return (
    <main>
      <p role="status">Status: {status}</p>
      {error !== undefined && <p role="alert">{error.message}</p>}
      <ol aria-label="Messages">
        {messages.map((message) => (
          <li key={message.id} aria-label={`${message.role} message`} data-run-id={message.metadata?.runId}>
            {message.parts.map((part, index) => <Part key={index} part={part} approve={approve} />)}
            {message.metadata?.usage !== undefined && <p>Tokens: {message.metadata.usage.totalTokens}</p>}
          </li>
        ))}
      </ol>
      <form onSubmit={submit}>
        <label>Message <textarea value={input} onChange={(event) => setInput(event.target.value)} /></label>
        <button type="submit">Send</button>
        <button type="button" onClick={() => void stopTurn()}>Stop</button>
      </form>
    </main>
  )
}

createRoot(document.getElementById("root")!).render(<Chat />)
