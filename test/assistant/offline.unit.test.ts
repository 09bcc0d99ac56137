/**
 * The offline model through the `ai` SDK's `streamText` (and `generateText`): every directive of
 * its contract, the stream parts and their order, usage, tool calls and their results, failures,
 * images, and abort.
 */
import { APICallError, type LanguageModelV3StreamPart } from "@ai-sdk/provider"
import { generateText, jsonSchema, type ModelMessage, stepCountIs, streamText, type TextStreamPart, tool, type ToolSet } from "ai"
import { describe, expect, it } from "vitest"
import { OfflineCannotReadFile, offlineModel } from "../../src/assistant/models/offline.ts"

const anyObject = jsonSchema<Record<string, unknown>>({ type: "object" })

interface Run {
  readonly system?: string
  readonly messages: Array<ModelMessage>
  readonly tools?: ToolSet
  readonly effort?: string
  readonly steps?: number
  readonly abortSignal?: AbortSignal
}

const collect = async (run: Run) => {
  const result = streamText({
    model: offlineModel("fast"),
    system: run.system,
    messages: run.messages,
    tools: run.tools,
    stopWhen: stepCountIs(run.steps ?? 1),
    providerOptions: run.effort === undefined ? undefined : { offline: { effort: run.effort } },
    abortSignal: run.abortSignal,
    maxRetries: 0,
    // failures are asserted from the stream's error part; the SDK would also log them
    onError: () => {}
  })
  const parts: Array<TextStreamPart<ToolSet>> = []
  for await (const part of result.fullStream) parts.push(part)
  const of = <T extends TextStreamPart<ToolSet>["type"]>(type: T) => parts.filter((p): p is Extract<TextStreamPart<ToolSet>, { type: T }> => p.type === type)
  return {
    parts,
    types: parts.map((p) => p.type),
    text: of("text-delta").map((p) => p.text).join(""),
    textChunks: of("text-delta").map((p) => p.text),
    reasoning: of("reasoning-delta").map((p) => p.text),
    of
  }
}

const user = (content: string): ModelMessage => ({ role: "user", content })
const assistant = (content: string): ModelMessage => ({ role: "assistant", content })

const replyTo = async (content: string, run: Partial<Run> = {}) => (await collect({ messages: [user(content)], ...run })).text

describe("a text answer", () => {
  it("is a reasoning block, then the text in chunks of three words, then the finish", async () => {
    const run = await collect({ messages: [user("hello there my dear old friend")] })
    expect(run.types).toEqual([
      "start",
      "start-step",
      "reasoning-start",
      "reasoning-delta",
      "reasoning-end",
      "text-start",
      "text-delta",
      "text-delta",
      "text-delta",
      "text-end",
      "finish-step",
      "finish"
    ])
    expect(run.reasoning).toEqual(["Reading the message."])
    expect(run.textChunks).toEqual(["You said: hello ", "there my dear ", "old friend"])
    expect(run.of("finish")[0].finishReason).toBe("stop")
  })

  it("says the effort in a second reasoning delta when one is set", async () => {
    const run = await collect({ messages: [user("hi")], effort: "xhigh" })
    expect(run.reasoning).toEqual(["Reading the message.", " Effort xhigh."])
  })

  it("counts a token per four characters of the prompt and of what it wrote", async () => {
    const system = "You are a test."
    const run = await collect({ system, messages: [user("first"), assistant("You said: first"), user("second one")], effort: "low" })
    const usage = run.of("finish")[0].totalUsage
    const inputChars = system.length + "first".length + "You said: first".length + "second one".length
    const reasoning = "Reading the message. Effort low."
    const text = "You said: second one"
    expect(usage.inputTokens).toBe(Math.ceil(inputChars / 4))
    expect(usage.outputTokens).toBe(Math.ceil((reasoning.length + text.length) / 4))
    expect(usage.outputTokenDetails.reasoningTokens).toBe(Math.ceil(reasoning.length / 4))
    expect(usage.totalTokens).toBe(usage.inputTokens! + usage.outputTokens!)
  })

  it("is the same answer every time, and the same through generateText", async () => {
    const messages = [user("/long 12")]
    const [a, b] = [await collect({ messages }), await collect({ messages })]
    expect(a.types).toEqual(b.types)
    expect(a.text).toBe(b.text)
    const generated = await generateText({ model: offlineModel("fast"), messages, providerOptions: { offline: { effort: "max" } } })
    expect(generated.text).toBe(a.text)
    expect(generated.reasoningText).toBe("Reading the message. Effort max.")
    expect(generated.finishReason).toBe("stop")
  })
})

describe("directives", () => {
  it("default: You said, with the directive lines taken out", async () => {
    expect(await replyTo("  what is up  ")).toBe("You said: what is up")
    expect(await replyTo("/slow 1\nwhat is up\n/unknown stays")).toBe("You said: what is up\n/unknown stays")
  })

  it("/long n: n words", async () => {
    const text = await replyTo("/long 25")
    expect(text.split(" ")).toHaveLength(25)
    expect(await replyTo("/long 3")).toBe("alpha bravo charlie")
  })

  it("/memory: the earlier messages and the summary in the system prompt", async () => {
    const messages = [user("one"), assistant("You said: one"), user("two"), assistant("You said: two"), user("/memory")]
    expect((await collect({ messages })).text).toBe("I see 4 earlier messages. Summary: none.")
    const system = "You are helpful.\nSummary of earlier messages: Alice asked for a plan\n  and got one\n\nGoal: other"
    expect((await collect({ system, messages })).text).toBe("I see 4 earlier messages. Summary: Alice asked for a plan and got one.")
  })

  it("/goal-after n: working until the n-th round, counted by goal checks after the person's message", async () => {
    const system = "You are helpful.\nGoal: ship the release"
    const first = [user("old"), assistant("Goal reached: old"), user("/goal-after 3\nplease ship it")]
    expect((await collect({ system, messages: first })).text).toBe("Working on it (round 1).")
    const second = [...first, assistant("Working on it (round 1)."), user("[goal check] The goal is not met yet: no. Continue.")]
    expect((await collect({ system, messages: second })).text).toBe("Working on it (round 2).")
    const third = [...second, assistant("Working on it (round 2)."), user("[goal check] The goal is not met yet: no. Continue.")]
    expect((await collect({ system, messages: third })).text).toBe("Goal reached: ship the release")
    expect((await collect({ messages: [user("/goal-after 1")] })).text).toBe("Goal reached: the goal")
  })

  it("/slow ms: waits between text chunks", async () => {
    const started = Date.now()
    const run = await collect({ messages: [user("/slow 40\n/long 12")] })
    expect(run.textChunks).toHaveLength(4)
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 40 - 5)
  })

  it("/fail: a 500 APICallError that is not retried; /fail balance: 402 insufficient_quota", async () => {
    const failed = (await collect({ messages: [user("/fail\nanything")] })).of("error")
    expect(failed).toHaveLength(1)
    const error = failed[0].error as APICallError
    expect(APICallError.isInstance(error)).toBe(true)
    expect({ status: error.statusCode, retryable: error.isRetryable }).toEqual({ status: 500, retryable: false })
    const balance = (await collect({ messages: [user("/fail balance")] })).of("error")[0].error as APICallError
    expect(balance.statusCode).toBe(402)
    expect(JSON.parse(balance.responseBody!)).toEqual({ error: { code: "insufficient_quota" } })
  })
})

describe("tool calls", () => {
  const lookup = tool({ inputSchema: anyObject })

  it("/tool: reasoning, the input in three or more deltas, the call; finish reason tool-calls", async () => {
    const run = await collect({ messages: [user("/tool lookup {\"id\": 12345, \"name\": \"widget\"}")], tools: { lookup }, effort: "low" })
    expect(run.types).toEqual([
      "start",
      "start-step",
      "reasoning-start",
      "reasoning-delta",
      "reasoning-delta",
      "reasoning-end",
      "tool-input-start",
      ...run.of("tool-input-delta").map(() => "tool-input-delta"),
      "tool-input-end",
      "tool-call",
      "finish-step",
      "finish"
    ])
    expect(run.reasoning).toEqual(["Planning a call to lookup.", " Effort low."])
    const deltas = run.of("tool-input-delta")
    expect(deltas.length).toBeGreaterThanOrEqual(3)
    expect(JSON.parse(deltas.map((d) => d.delta).join(""))).toEqual({ id: 12345, name: "widget" })
    const [call] = run.of("tool-call")
    expect({ toolName: call.toolName, input: call.input }).toEqual({ toolName: "lookup", input: { id: 12345, name: "widget" } })
    expect(run.of("tool-input-start")[0].id).toBe(call.toolCallId)
    expect(run.of("finish")[0].finishReason).toBe("tool-calls")
  })

  it("/tool: the same prompt calls with the same id, another prompt with another", async () => {
    const idOf = async (content: string) => (await collect({ messages: [user(content)], tools: { lookup } })).of("tool-call")[0].toolCallId
    const id = await idOf("/tool lookup {}")
    expect(await idOf("/tool lookup {}")).toBe(id)
    expect(await idOf("/tool lookup {\"a\":1}")).not.toBe(id)
  })

  it("/tool with input that is not JSON answers in text", async () => {
    expect(await replyTo("/tool lookup {not json", { tools: { lookup } })).toBe("Cannot call lookup: its input is not JSON.")
  })

  it("/ask: a call to ask_user with the question and the options", async () => {
    const run = await collect({ messages: [user("/ask Which colour? | red | green | blue")], tools: { ask_user: tool({ inputSchema: anyObject }) } })
    const [call] = run.of("tool-call")
    expect({ toolName: call.toolName, input: call.input }).toEqual({ toolName: "ask_user", input: { question: "Which colour?", options: ["red", "green", "blue"] } })
  })

  it("after a tool result: says what the tool returned, cut to 200 characters", async () => {
    const tools = { lookup: tool({ inputSchema: anyObject, execute: async (input) => ({ found: true, echo: input }) }) }
    const run = await collect({ messages: [user("/tool lookup {\"id\": 7}")], tools, steps: 2 })
    expect(run.text).toBe(`Tool lookup returned: ${JSON.stringify({ found: true, echo: { id: 7 } })}.`)
    expect(run.of("finish")[0].finishReason).toBe("stop")
    const big = { lookup: tool({ inputSchema: anyObject, execute: async () => ({ data: "x".repeat(500) }) }) }
    const long = await collect({ messages: [user("/tool lookup {}")], tools: big, steps: 2 })
    expect(long.text).toBe(`Tool lookup returned: ${JSON.stringify({ data: "x".repeat(500) }).slice(0, 200)}.`)
  })

  it("after a question timed out: assumes the first option, or the usual default", async () => {
    const ask_user = tool({ inputSchema: anyObject, execute: async () => ({ timedOut: true }) })
    const withOptions = await collect({ messages: [user("/ask Deploy where? | staging | production")], tools: { ask_user }, steps: 2 })
    expect(withOptions.text).toBe('Tool ask_user returned: {"timedOut":true}. No answer came, so I assume staging.')
    const without = await collect({ messages: [user("/ask Deploy now?")], tools: { ask_user }, steps: 2 })
    expect(without.text).toBe('Tool ask_user returned: {"timedOut":true}. No answer came, so I assume the usual default.')
  })
})

describe("judge and summariser", () => {
  it("[judge]: met iff the last assistant text says Goal reached", async () => {
    const system = "[judge] Check the reply.\nGoal: ship it"
    const met = await collect({ system, messages: [user("/goal-after 1"), assistant("Goal reached: ship it")] })
    expect(JSON.parse(met.text)).toEqual({ met: true, reason: expect.any(String) })
    expect(met.reasoning).toEqual(["Judging the reply against the goal."])
    const notMet = await collect({ system, messages: [user("/goal-after 2"), assistant("Working on it (round 1).")] })
    expect(JSON.parse(notMet.text)).toEqual({ met: false, reason: expect.any(String) })
  })

  it("[summarise]: the first eight words of every message, cut to 2000 characters", async () => {
    const system = "[summarise] Summarise the conversation."
    const messages = [user("one two three four five six seven eight nine ten"), assistant("You said: short"), user("/fail")]
    expect((await collect({ system, messages })).text).toBe(
      "Summary of 3 messages: one two three four five six seven eight / You said: short / /fail"
    )
    const many = Array.from({ length: 300 }, (_, i) => user(`message number ${i} says a few more words here`))
    const long = (await collect({ system, messages: many })).text
    expect(long).toHaveLength(2000)
    expect(long.startsWith("Summary of 300 messages: message number 0 says a few more words / message")).toBe(true)
  })
})

describe("files", () => {
  it("refuses a prompt with an image: OfflineCannotReadFile", async () => {
    const png = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10])
    const run = await collect({ messages: [{ role: "user", content: [{ type: "text", text: "look" }, { type: "image", image: png, mediaType: "image/png" }] }] })
    const [error] = run.of("error")
    expect(error.error).toBeInstanceOf(OfflineCannotReadFile)
    expect((error.error as OfflineCannotReadFile).mediaType).toBe("image/png")
    expect(run.of("text-delta")).toEqual([])
  })

  it("refuses an image by URL without downloading it", async () => {
    const run = await collect({ messages: [{ role: "user", content: [{ type: "image", image: new URL("http://127.0.0.1:9/nowhere.png"), mediaType: "image/png" }] }] })
    expect(run.of("error")[0].error).toBeInstanceOf(OfflineCannotReadFile)
  })

  it("does not read other files, nor refuse them", async () => {
    const pdf = { type: "file" as const, data: new Uint8Array([37, 80, 68, 70]), mediaType: "application/pdf" }
    const run = await collect({ messages: [{ role: "user", content: [{ type: "text", text: "see attached" }, pdf] }] })
    expect(run.text).toBe("You said: see attached")
  })
})

describe("abort", () => {
  it("stops a slow answer when the signal fires", async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 120)
    const started = Date.now()
    const run = await collect({ messages: [user("/slow 50\n/long 60")], abortSignal: controller.signal })
    expect(run.types).toContain("abort")
    expect(run.textChunks.length).toBeGreaterThan(0)
    expect(run.textChunks.length).toBeLessThan(20)
    expect(Date.now() - started).toBeLessThan(1000)
  })

  it("the model's own stream errors with the signal's reason, and a call after the abort is refused", async () => {
    const model = offlineModel("fast")
    const controller = new AbortController()
    const prompt = [{ role: "user" as const, content: [{ type: "text" as const, text: "/slow 1000\n/long 9" }] }]
    const { stream } = await model.doStream({ prompt, abortSignal: controller.signal })
    const reader = stream.getReader()
    const seen: Array<LanguageModelV3StreamPart["type"]> = []
    for (;;) {
      const { value } = await reader.read()
      seen.push(value!.type)
      if (value!.type === "text-delta") break
    }
    controller.abort()
    await expect(reader.read()).rejects.toMatchObject({ name: "AbortError" })
    expect(seen).toEqual(["stream-start", "reasoning-start", "reasoning-delta", "reasoning-end", "text-start", "text-delta"])
    await expect(model.doGenerate({ prompt, abortSignal: controller.signal })).rejects.toMatchObject({ name: "AbortError" })
  })
})
