/**
 * The AG-UI route over real HTTP with the built-in offline model, run by AG-UI's own client
 * (`HttpAgent` of @ag-ui/client): a streamed answer with its usage, a tool call and its result, an
 * approval that ends the run with an interrupt, answered by the next run's resume, a stop by the
 * client's `abortRun`, and `connectAgent` joining a thread's running turn.
 */
import { randomUUID } from "node:crypto"
import {
  type AgentSubscriber,
  type BaseEvent,
  HttpAgent,
  type Interrupt,
  type RunAgentInput,
  type RunFinishedEvent,
  type RunStartedEvent,
  runHttpRequest,
  transformHttpEventStream
} from "@ag-ui/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chatUrl, postJson, streamChat } from "../support/chat.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call, createNote } from "./client.ts"

let node: TestNode

beforeAll(async () => {
  node = await startTestNode()
})
afterAll(async () => {
  await node?.stop()
})

const agentOf = (threadId: string = randomUUID()) =>
  new HttpAgent({ url: chatUrl(node, "agui"), headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}` }, threadId })

/**
 * HttpAgent with AG-UI's connect (`connectAgent`), which the library leaves to the transport: the
 * same RunAgentInput posted to the route's `connect`, its events read as HttpAgent reads a run's.
 */
class ConnectingAgent extends HttpAgent {
  protected override connect(input: RunAgentInput) {
    return transformHttpEventStream(runHttpRequest(() => this.fetch(`${this.url}/connect`, this.requestInit(input))))
  }
}

const connectingAgentOf = (threadId: string) =>
  new ConnectingAgent({ url: chatUrl(node, "agui"), headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}` }, threadId })

const wordsOf = (text: string) => text.split(" ").filter((word) => word !== "").length

const until = async (predicate: () => boolean, timeoutMs = 15_000) => {
  const started = Date.now()
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) throw new Error("timed out")
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The turn's run id (tse_), as RUN_STARTED names it. */
const turnRunIdOf = (events: ReadonlyArray<BaseEvent>) => (events.find((e) => e.type === "RUN_STARTED") as RunStartedEvent | undefined)?.metadata?.turnRunId as string | undefined

/** Runs the agent once: the events it saw, how the run ended, and the interrupts it left. */
const runOnce = async (agent: HttpAgent, parameters: Parameters<HttpAgent["runAgent"]>[0] = {}) => {
  const events: Array<BaseEvent> = []
  let outcome: string | undefined
  let interrupts: ReadonlyArray<Interrupt> = []
  const subscriber: AgentSubscriber = {
    onEvent: ({ event }) => {
      events.push(event)
    },
    onRunFinishedEvent: (finished) => {
      outcome = finished.outcome
      if (finished.outcome === "interrupt") interrupts = finished.interrupts
    }
  }
  await agent.runAgent(parameters, subscriber)
  return { events, types: events.map((e) => e.type), outcome, interrupts }
}

const say = (agent: HttpAgent, text: string) => agent.addMessage({ id: randomUUID(), role: "user", content: text })

const assistantText = (agent: HttpAgent) =>
  agent.messages.flatMap((m) => (m.role === "assistant" && typeof m.content === "string" ? [m.content] : [])).join("")

describe("a turn as an AG-UI run", () => {
  it("streams the answer: the assistant message's text is the SSE turn's", async () => {
    const sse = await streamChat(node, { content: "hello there" })
    const agent = agentOf()
    say(agent, "hello there")
    const run = await runOnce(agent)
    expect(run.types[0]).toBe("RUN_STARTED")
    expect(run.types.at(-1)).toBe("RUN_FINISHED")
    expect(run.outcome).toBe("success")
    expect(run.types).toEqual(expect.arrayContaining(["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]))
    expect(assistantText(agent)).toBe(sse.done.reply)
    // the turn's usage, as the SSE turn's usage event states it, in AG-UI's accounting
    const { usage } = sse.events.find((e) => e.type === "usage")
    expect(usage.totalTokens).toBeGreaterThan(0)
    expect((run.events.at(-1) as RunFinishedEvent).usage).toEqual([
      { inputTokens: usage.promptTokens, outputTokens: usage.completionTokens, totalTokens: usage.totalTokens }
    ])
  })

  it("a thread keeps its history: the next run continues the same conversation", async () => {
    const agent = agentOf(randomUUID().slice(0, 20))
    say(agent, "remember teal")
    await runOnce(agent)
    say(agent, "/memory")
    await runOnce(agent)
    expect(agent.messages.at(-1)).toMatchObject({ role: "assistant", content: "I see 2 earlier messages. Summary: none." })
  })

  it("a tool call streams its name and arguments, then its result", async () => {
    const agent = agentOf()
    say(agent, "/tool system__ping {}")
    const run = await runOnce(agent)
    expect(run.outcome).toBe("success")
    const withCall = agent.messages.find((m) => m.role === "assistant" && (m.toolCalls?.length ?? 0) > 0)
    expect(withCall?.role === "assistant" && withCall.toolCalls).toEqual([expect.objectContaining({ function: { name: "system.ping", arguments: "{}" } })])
    const callId = withCall?.role === "assistant" ? withCall.toolCalls![0]!.id : undefined
    expect(agent.messages.find((m) => m.role === "tool")).toMatchObject({ toolCallId: callId, content: JSON.stringify({ pong: true }) })
  })

  it("a failed tool call's result is the error body REST answers for the same call", async () => {
    const rest = await call(node, "node.get", { nodeId: "nod_missing" })
    expect(rest.status).toBe(404)
    const agent = agentOf()
    say(agent, '/tool node__get {"nodeId":"nod_missing"}')
    const run = await runOnce(agent)
    expect(run.outcome).toBe("success")
    const result = agent.messages.find((m) => m.role === "tool")
    expect(JSON.parse(result?.role === "tool" ? (result.content as string) : "null")).toEqual(rest.body)
    expect(rest.body).toEqual({ error: { code: "not_found", reason: "node_not_found", message: expect.any(String) } })
  })
})

describe("approvals as interrupts", () => {
  const makeNode = () => createNote(node)

  /** A run that parks a delete (ending with its interrupt), then the run that answers it. */
  const parkAndAnswer = async (approved: boolean) => {
    const nodeId = await makeNode()
    const agent = agentOf()
    say(agent, `/tool node__delete {"nodeId":"${nodeId}"}`)
    const parked = await runOnce(agent)
    expect(parked.outcome).toBe("interrupt")
    expect(parked.interrupts).toEqual([expect.objectContaining({ id: expect.stringMatching(/^apr_/), reason: "tool_approval", toolCallId: expect.any(String) })])
    const [interrupt] = parked.interrupts
    const parkedCall = agent.messages.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : [])).find((c) => c.id === interrupt!.toolCallId)
    expect(parkedCall).toMatchObject({ function: { name: "node.delete", arguments: JSON.stringify({ nodeId }) } })
    expect(parked.types).not.toContain("TOOL_CALL_RESULT")
    expect((await call(node, "node.get", { nodeId })).status).toBe(200)
    const answered = await runOnce(agent, { resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { approved, note: approved ? undefined : "keep it" } }] })
    expect(answered.outcome).toBe("success")
    expect(answered.types).toEqual(["RUN_STARTED", "TOOL_CALL_RESULT", "RUN_FINISHED"])
    const results = agent.messages.filter((m) => m.role === "tool" && m.toolCallId === interrupt!.toolCallId)
    expect(results).toHaveLength(1)
    const [result] = results
    return { nodeId, agent, interruptId: interrupt!.id, result: result?.role === "tool" ? JSON.parse(result.content as string) : undefined }
  }

  it("approved on the next run: the call runs and its result is the execution", async () => {
    const { nodeId, result } = await parkAndAnswer(true)
    expect(result).toEqual({ status: "succeeded", runId: expect.stringMatching(/^tse_/) })
    expect((await call(node, "node.get", { nodeId })).status).toBe(404)
  })

  it("denied on the next run: nothing runs and the result says denied; answered again, the result says why it was refused", async () => {
    const { nodeId, agent, interruptId, result } = await parkAndAnswer(false)
    expect(result).toMatchObject({ status: "denied" })
    expect((await call(node, "node.get", { nodeId })).status).toBe(200)
    const again = await runOnce(agent, { resume: [{ interruptId, status: "resolved", payload: { approved: true } }] })
    const refused = again.events.find((e) => e.type === "TOOL_CALL_RESULT") as { content?: string } | undefined
    // the error body the approvals route answers for the same resolve
    const rest = await postJson(node, "agent/approvals/resolve", { approvalId: interruptId.split(":")[0], decision: "approved" })
    expect(rest.status).toBe(409)
    expect(JSON.parse(refused?.content ?? "null")).toEqual(rest.body)
    expect(rest.body).toEqual({ error: { code: "conflict", reason: "approval_expired", message: expect.any(String) } })
    expect((await call(node, "node.get", { nodeId })).status).toBe(200)
  })
})

describe("questions", () => {
  it("a question is a CUSTOM event named question, answered through the question route while the run goes on", async () => {
    const agent = agentOf()
    say(agent, "/ask Which colour? | red | blue")
    const asked: Array<unknown> = []
    agent.subscribe({
      onCustomEvent: ({ event }) => {
        asked.push(event.value)
        const value = event.value as { id: string; status: string }
        if (event.name === "question" && value.status === "open") void postJson(node, "assistant/question/answer", { questionId: value.id, answer: "blue" })
      }
    })
    const run = await runOnce(agent)
    expect(run.outcome).toBe("success")
    expect(asked).toEqual([
      { id: expect.stringMatching(/^qst_/), question: "Which colour?", options: ["red", "blue"], status: "open" },
      expect.objectContaining({ status: "answered" })
    ])
    expect(assistantText(agent)).toContain('Tool ask_user returned: {"answer":"blue"}')
    // the ask_user call has one result, the question's end
    expect(agent.messages.filter((m) => m.role === "tool")).toEqual([expect.objectContaining({ content: JSON.stringify({ status: "answered" }) })])
  })
})

describe("stop and connect", () => {
  it("abortRun stops the turn: it ends stopped with the partial reply the client saw", async () => {
    const agent = agentOf()
    say(agent, "/long 60\n/slow 60")
    const events: Array<BaseEvent> = []
    const running = agent.runAgent({}, {
      onEvent: ({ event }) => {
        events.push(event)
      }
    })
    await until(() => wordsOf(assistantText(agent)) >= 6)
    agent.abortRun()
    await running
    const runId = turnRunIdOf(events)
    expect(runId).toMatch(/^tse_/)
    // the run ends as the turn's end is recorded: stopped, not finished 60 words later
    let reply = (await postJson(node, "assistant/reply", { runId })).body
    for (const started = Date.now(); reply.runStatus === "running" && Date.now() - started < 15_000;) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      reply = (await postJson(node, "assistant/reply", { runId })).body
    }
    expect(reply.runStatus).toBe("stopped")
    expect(reply.reply.text.startsWith(assistantText(agent))).toBe(true)
    expect(wordsOf(reply.reply.text)).toBeLessThan(60)
    expect(events.map((e) => e.type)).not.toContain("RUN_FINISHED")
  })

  it("connectAgent joins the thread's running turn from its start; leaving it stops nothing; with none running it ends at once", async () => {
    const threadId = randomUUID()
    const starter = agentOf(threadId)
    say(starter, "/long 60\n/slow 60")
    const started = runOnce(starter)
    await until(() => wordsOf(assistantText(starter)) >= 4)

    // one client connects and leaves early: the turn goes on
    const leaving = connectingAgentOf(threadId)
    const left = leaving.connectAgent({}, {
      onTextMessageContentEvent: () => {
        if (wordsOf(assistantText(leaving)) >= 2) leaving.abortRun()
      }
    })
    await left
    expect(wordsOf(assistantText(leaving))).toBeLessThan(60)

    // another connects and sees the run from its first event to its end
    const joining = connectingAgentOf(threadId)
    const types: Array<string> = []
    let outcome: string | undefined
    await joining.connectAgent({}, {
      onEvent: ({ event }) => {
        types.push(event.type)
      },
      onRunFinishedEvent: (finished) => {
        outcome = finished.outcome
      }
    })
    const run = await started
    expect(run.outcome).toBe("success")
    expect(wordsOf(assistantText(starter))).toBe(60)
    expect(types[0]).toBe("RUN_STARTED")
    expect(types.at(-1)).toBe("RUN_FINISHED")
    expect(outcome).toBe("success")
    expect(assistantText(joining)).toBe(assistantText(starter))

    // the thread runs nothing now
    const idle = connectingAgentOf(threadId)
    const seen: Array<string> = []
    const result = await idle.connectAgent({}, { onEvent: ({ event }) => void seen.push(event.type) })
    expect(seen).toEqual([])
    expect(result.newMessages).toEqual([])
  })
})
