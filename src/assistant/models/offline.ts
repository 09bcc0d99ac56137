/**
 * The built-in offline model: a real `LanguageModelV3` (provider `offline`) that answers without
 * any network, deterministically (no randomness, no clock), so the engine, its tests and a node
 * without provider keys all run real turns through the `ai` SDK. Its behaviour is a contract the
 * engine's tests depend on:
 *
 * What it reads from the prompt
 * - the system prompt (every system message, joined by newlines);
 * - the last *real* user message: the last user message that does not start with `[goal check]`;
 *   its lines that start with a known directive (below) are directives, the other lines (trimmed)
 *   are its content;
 * - tool results: the tool message that ends the prompt, if any.
 *
 * What it answers, first rule that applies
 * 1. System prompt starts with `[judge]`: the text `{"met":true|false,"reason":"..."}`; met iff
 *    the text of the last assistant message in the prompt contains `Goal reached`.
 * 2. System prompt starts with `[summarise]`: `Summary of N messages: ` and the first 8 words of
 *    each user or assistant message that has text, joined by ` / `, cut to 2000 characters.
 * 3. The prompt ends with tool results: per result `Tool <toolName> returned: <JSON, cut to 200
 *    characters>.` (the JSON of the output's value; of the whole output for a denied execution),
 *    and when that value has `timedOut: true`, ` No answer came, so I assume <the first option of
 *    the call's input, or "the usual default">.`; results are joined by a space.
 * 4. Directives of the last real user message, in this order of precedence:
 *    - `/fail`: throws an `APICallError` with status 500 (the engine's `model_call_failed`);
 *      `/fail balance`: status 402 with body `{"error":{"code":"insufficient_quota"}}`. Neither
 *      is retryable: the same prompt fails the same way.
 *    - `/tool <toolName> <json>`: calls the tool with that input (`{}` when none; input that is
 *      not JSON gets the text `Cannot call <toolName>: its input is not JSON.` instead).
 *    - `/ask <question> | <option> | <option>...`: calls `ask_user` with `{question, options}`.
 *    - `/goal-after <n>`: with k = 1 + the user messages starting with `[goal check]` after the
 *      last real user message: `Goal reached: <goal>` when k >= n, else `Working on it (round k).`;
 *      the goal is the rest of the system prompt's line `Goal: ...` (`the goal` when none).
 *    - `/memory`: `I see N earlier messages. Summary: <S>.` with N the user and assistant
 *      messages before the last real user message and S the text after `Summary of earlier
 *      messages:` in the system prompt up to a blank line, or `none`.
 *    - `/long <n>`: n words.
 *    - otherwise `You said: <content>`.
 *    `/slow <ms>` adds to any of the answers above: it waits `ms` between text chunks.
 *
 * How it answers
 * - Every answer opens with a reasoning block (`reasoning-start`, one or two `reasoning-delta`,
 *   `reasoning-end`) saying what it does (`Reading the message.`, `Planning a call to <tool>.`,
 *   ...) plus ` Effort <x>.` when `providerOptions.offline.effort` is set.
 * - A text answer: `text-start`, its words in chunks of three, `text-end`; finish reason `stop`.
 * - A tool call: `tool-input-start`, the input JSON in 3 or more `tool-input-delta` chunks (fewer
 *   only for an input under 3 characters), `tool-input-end`, `tool-call`; finish reason
 *   `tool-calls`. The call id is derived from the prompt, so the same prompt gives the same id.
 * - Usage: input tokens = ceil(characters of the prompt's text, reasoning, tool inputs and tool
 *   results / 4), output tokens = ceil(characters it wrote / 4), its reasoning share apart.
 * - The abort signal is honoured before the call and between parts (a `/slow` wait ends at once):
 *   the call rejects, or the stream errors, with the signal's reason.
 * - It reads no image: a prompt with an image file part is refused with `OfflineCannotReadFile`
 *   (the engine's `attachment_refused`, reason `unsupported_by_model`). Other file parts are not
 *   read either, and not refused. It claims every URL, so the SDK never downloads a file for it.
 */
import { createHash } from "node:crypto"
import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3Content,
  type LanguageModelV3GenerateResult,
  type LanguageModelV3Message,
  type LanguageModelV3Prompt,
  type LanguageModelV3StreamPart,
  type LanguageModelV3StreamResult,
  type LanguageModelV3ToolResultOutput,
  type LanguageModelV3Usage
} from "@ai-sdk/provider"
import { Schema } from "effect"

/** The offline model reads no image (spec 7.2 `attachment_refused`, reason `unsupported_by_model`). */
export class OfflineCannotReadFile extends Schema.TaggedError<OfflineCannotReadFile>()("OfflineCannotReadFile", {
  mediaType: Schema.String,
  filename: Schema.NullOr(Schema.String)
}) {
  override get message() {
    return `the offline model cannot read ${this.filename ?? "an attached file"} (${this.mediaType})`
  }
}

const ASK_USER = "ask_user"
const GOAL_CHECK = "[goal check]"
const SUMMARY_MARK = "Summary of earlier messages:"
const WORDS_PER_CHUNK = 3
const VOCABULARY = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]

type Message = LanguageModelV3Message

/** What one call answers: text, a tool call, or a failure; each after its reasoning. */
type Answer =
  | { readonly kind: "text"; readonly reasoning: string; readonly text: string }
  | { readonly kind: "tool"; readonly reasoning: string; readonly toolName: string; readonly input: string }
  | { readonly kind: "fail"; readonly error: APICallError }

// ---------------------------------------------------------------------------------------------
// reading the prompt

const textOf = (message: Message): string =>
  message.role === "system"
    ? message.content
    : message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")

const systemOf = (prompt: LanguageModelV3Prompt) =>
  prompt.flatMap((m) => (m.role === "system" ? [m.content] : [])).join("\n")

const isGoalCheck = (message: Message) => message.role === "user" && textOf(message).startsWith(GOAL_CHECK)

/** Index of the last user message that a person wrote (not an engine's goal check); -1 if none. */
const lastRealUserIndex = (prompt: LanguageModelV3Prompt): number => {
  for (let i = prompt.length - 1; i >= 0; i--) if (prompt[i].role === "user" && !isGoalCheck(prompt[i])) return i
  return -1
}

const DIRECTIVE = /^\/(tool|ask|slow|fail|long|memory|goal-after)(?:\s+(.*))?$/

interface Directives {
  readonly named: ReadonlyMap<string, string>
  readonly content: string
}

const directivesOf = (text: string): Directives => {
  const named = new Map<string, string>()
  const content: Array<string> = []
  for (const line of text.split("\n")) {
    const match = DIRECTIVE.exec(line.trim())
    if (match === null) content.push(line)
    // the first of a directive given twice counts
    else if (!named.has(match[1])) named.set(match[1], (match[2] ?? "").trim())
  }
  return { named, content: content.join("\n").trim() }
}

const wholeNumber = (value: string | undefined): number | undefined => {
  if (value === undefined || !/^\d+$/.test(value)) return undefined
  return Number(value)
}

const outputValue = (output: LanguageModelV3ToolResultOutput): unknown =>
  output.type === "execution-denied" ? output : output.value

const cut = (text: string, max: number) => (text.length > max ? text.slice(0, max) : text)

const firstWords = (text: string, n: number) => text.split(/\s+/).filter((w) => w !== "").slice(0, n).join(" ")

/** Characters of everything the prompt says in text: what the usage counts as input. */
const promptChars = (prompt: LanguageModelV3Prompt): number =>
  prompt.reduce((sum, message) => {
    if (message.role === "system") return sum + message.content.length
    return (
      sum +
      message.content.reduce((inner, part) => {
        switch (part.type) {
          case "text":
          case "reasoning":
            return inner + part.text.length
          case "tool-call":
            return inner + JSON.stringify(part.input ?? null).length
          case "tool-result":
            return inner + JSON.stringify(outputValue(part.output) ?? null).length
          default:
            return inner
        }
      }, 0)
    )
  }, 0)

const refuseImages = (prompt: LanguageModelV3Prompt) => {
  for (const message of prompt) {
    if (message.role === "system") continue
    for (const part of message.content) {
      if (part.type === "file" && part.mediaType.startsWith("image/")) {
        throw new OfflineCannotReadFile({ mediaType: part.mediaType, filename: part.filename ?? null })
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// deciding the answer

const judge = (prompt: LanguageModelV3Prompt): Answer => {
  const lastAssistant = [...prompt].reverse().find((m) => m.role === "assistant")
  const met = lastAssistant !== undefined && textOf(lastAssistant).includes("Goal reached")
  const reason = met ? "The reply says the goal is reached." : "The reply does not say the goal is reached yet."
  return { kind: "text", reasoning: "Judging the reply against the goal.", text: JSON.stringify({ met, reason }) }
}

const summarise = (prompt: LanguageModelV3Prompt): Answer => {
  const texts = prompt.flatMap((m) => (m.role === "user" || m.role === "assistant" ? [textOf(m)] : [])).filter((t) => t.trim() !== "")
  const text = cut(`Summary of ${texts.length} messages: ${texts.map((t) => firstWords(t, 8)).join(" / ")}`, 2000)
  return { kind: "text", reasoning: `Summarising ${texts.length} messages.`, text }
}

/** The options the call that produced a result offered (an `ask_user` call's), if any. */
const firstOptionOf = (prompt: LanguageModelV3Prompt, toolCallId: string): string | undefined => {
  for (const message of prompt) {
    if (message.role !== "assistant") continue
    for (const part of message.content) {
      if (part.type !== "tool-call" || part.toolCallId !== toolCallId) continue
      const options = (part.input as { options?: unknown } | null)?.options
      if (Array.isArray(options) && typeof options[0] === "string") return options[0]
    }
  }
  return undefined
}

const afterToolResults = (prompt: LanguageModelV3Prompt, last: Extract<Message, { role: "tool" }>): Answer => {
  const sentences = last.content.flatMap((part) => {
    if (part.type !== "tool-result") return []
    const value = outputValue(part.output)
    const returned = `Tool ${part.toolName} returned: ${cut(JSON.stringify(value ?? null), 200)}.`
    const timedOut = typeof value === "object" && value !== null && (value as { timedOut?: unknown }).timedOut === true
    if (!timedOut) return [returned]
    return [`${returned} No answer came, so I assume ${firstOptionOf(prompt, part.toolCallId) ?? "the usual default"}.`]
  })
  return { kind: "text", reasoning: "Reading the tool result.", text: sentences.join(" ") }
}

const failure = (balance: boolean): APICallError =>
  new APICallError({
    message: balance ? "You exceeded your current quota (offline /fail balance)" : "The offline model failed on purpose (/fail)",
    url: "offline://model",
    requestBodyValues: {},
    statusCode: balance ? 402 : 500,
    responseBody: balance ? JSON.stringify({ error: { code: "insufficient_quota" } }) : JSON.stringify({ error: { code: "offline_failure" } }),
    isRetryable: false
  })

const toolCall = (toolName: string, rawInput: string): Answer => {
  const source = rawInput === "" ? "{}" : rawInput
  let input: unknown
  try {
    input = JSON.parse(source)
  } catch {
    return { kind: "text", reasoning: `Planning a call to ${toolName}.`, text: `Cannot call ${toolName}: its input is not JSON.` }
  }
  return { kind: "tool", reasoning: `Planning a call to ${toolName}.`, toolName, input: JSON.stringify(input) }
}

const fromDirectives = (prompt: LanguageModelV3Prompt): Answer => {
  const index = lastRealUserIndex(prompt)
  const { named, content } = directivesOf(index === -1 ? "" : textOf(prompt[index]))
  const reply = (text: string): Answer => ({ kind: "text", reasoning: "Reading the message.", text })
  const fail = named.get("fail")
  if (fail !== undefined) return { kind: "fail", error: failure(fail === "balance") }
  const tool = named.get("tool")
  if (tool !== undefined && tool !== "") {
    const space = tool.search(/\s/)
    return space === -1 ? toolCall(tool, "") : toolCall(tool.slice(0, space), tool.slice(space + 1).trim())
  }
  const ask = named.get("ask")
  if (ask !== undefined) {
    const [question, ...options] = ask.split("|").map((s) => s.trim())
    return { kind: "tool", reasoning: `Planning a call to ${ASK_USER}.`, toolName: ASK_USER, input: JSON.stringify({ question, options }) }
  }
  const goalAfter = wholeNumber(named.get("goal-after"))
  if (goalAfter !== undefined) {
    const round = 1 + prompt.slice(index + 1).filter(isGoalCheck).length
    const goal = /^Goal:\s*(.*)$/m.exec(systemOf(prompt))?.[1].trim() || "the goal"
    return reply(round >= goalAfter ? `Goal reached: ${goal}` : `Working on it (round ${round}).`)
  }
  if (named.has("memory")) {
    const earlier = prompt.slice(0, Math.max(index, 0)).filter((m) => m.role === "user" || m.role === "assistant").length
    const system = systemOf(prompt)
    const at = system.indexOf(SUMMARY_MARK)
    const summary = at === -1 ? "" : system.slice(at + SUMMARY_MARK.length).split(/\n\s*\n/)[0].replace(/\s+/g, " ").trim()
    return reply(`I see ${earlier} earlier messages. Summary: ${summary === "" ? "none" : summary}.`)
  }
  const long = wholeNumber(named.get("long"))
  if (long !== undefined) return reply(Array.from({ length: long }, (_, i) => VOCABULARY[i % VOCABULARY.length]).join(" "))
  return reply(`You said: ${content}`)
}

const answerFor = (prompt: LanguageModelV3Prompt): Answer => {
  const system = systemOf(prompt)
  if (system.startsWith("[judge]")) return judge(prompt)
  if (system.startsWith("[summarise]")) return summarise(prompt)
  const last = prompt[prompt.length - 1]
  if (last?.role === "tool" && last.content.some((part) => part.type === "tool-result")) return afterToolResults(prompt, last)
  return fromDirectives(prompt)
}

// ---------------------------------------------------------------------------------------------
// writing the answer

/** A part to send, and how long to wait before it. */
interface Step {
  readonly part: LanguageModelV3StreamPart
  readonly waitMs: number
}

const chunksOf = (text: string, size: number): Array<string> => {
  const words = text.split(/(?<=\s)/)
  const chunks: Array<string> = []
  for (let i = 0; i < words.length; i += size) chunks.push(words.slice(i, i + size).join(""))
  return chunks
}

/** Three or more pieces of the input (fewer only when it is shorter than three characters). */
const piecesOf = (input: string): Array<string> => {
  const count = Math.min(input.length, Math.max(3, Math.ceil(input.length / 16)))
  const size = Math.ceil(input.length / count)
  const pieces: Array<string> = []
  for (let i = 0; i < input.length; i += size) pieces.push(input.slice(i, i + size))
  return pieces
}

const usageOf = (inputChars: number, outputChars: number, reasoningChars: number): LanguageModelV3Usage => {
  const output = Math.ceil(outputChars / 4)
  const reasoning = Math.ceil(reasoningChars / 4)
  const input = Math.ceil(inputChars / 4)
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output - reasoning, reasoning }
  }
}

const stepsFor = (prompt: LanguageModelV3Prompt, answer: Exclude<Answer, { kind: "fail" }>, effort: string | undefined, slowMs: number): Array<Step> => {
  const now = (part: LanguageModelV3StreamPart): Step => ({ part, waitMs: 0 })
  const reasoning = effort === undefined ? [answer.reasoning] : [answer.reasoning, ` Effort ${effort}.`]
  const steps: Array<Step> = [
    now({ type: "stream-start", warnings: [] }),
    now({ type: "reasoning-start", id: "reasoning-0" }),
    ...reasoning.map((delta) => now({ type: "reasoning-delta", id: "reasoning-0", delta })),
    now({ type: "reasoning-end", id: "reasoning-0" })
  ]
  const reasoningChars = reasoning.join("").length
  if (answer.kind === "tool") {
    const id = toolCallIdOf(prompt)
    steps.push(
      now({ type: "tool-input-start", id, toolName: answer.toolName }),
      ...piecesOf(answer.input).map((delta) => now({ type: "tool-input-delta", id, delta })),
      now({ type: "tool-input-end", id }),
      now({ type: "tool-call", toolCallId: id, toolName: answer.toolName, input: answer.input }),
      now({
        type: "finish",
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage: usageOf(promptChars(prompt), reasoningChars + answer.input.length, reasoningChars)
      })
    )
    return steps
  }
  steps.push(
    now({ type: "text-start", id: "text-0" }),
    ...chunksOf(answer.text, WORDS_PER_CHUNK).map((delta, i) => ({ part: { type: "text-delta", id: "text-0", delta } as const, waitMs: i === 0 ? 0 : slowMs })),
    now({ type: "text-end", id: "text-0" }),
    now({
      type: "finish",
      finishReason: { unified: "stop", raw: "stop" },
      usage: usageOf(promptChars(prompt), reasoningChars + answer.text.length, reasoningChars)
    })
  )
  return steps
}

/** A tool call's id: the same prompt calls with the same id, another prompt with another. */
const toolCallIdOf = (prompt: LanguageModelV3Prompt): string => {
  const seen = prompt.map((m) => ({
    role: m.role,
    content: m.role === "system" ? m.content : m.content.map((p) => (p.type === "file" ? { type: "file", mediaType: p.mediaType } : p))
  }))
  return `call_${createHash("sha256").update(JSON.stringify(seen)).digest("hex").slice(0, 24)}`
}

const slowOf = (prompt: LanguageModelV3Prompt): number => {
  const index = lastRealUserIndex(prompt)
  return index === -1 ? 0 : wholeNumber(directivesOf(textOf(prompt[index])).named.get("slow")) ?? 0
}

const abortReason = (signal: AbortSignal) => signal.reason ?? new DOMException("This operation was aborted", "AbortError")

/** Waits, unless the signal fires first: then rejects with its reason. */
const wait = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal))
    if (ms <= 0) return resolve()
    const onAbort = () => {
      clearTimeout(timer)
      reject(abortReason(signal!))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    signal?.addEventListener("abort", onAbort, { once: true })
  })

/** Everything a call sends, or the failure it throws (before any part is sent, as a provider's HTTP error would). */
const plan = (options: LanguageModelV3CallOptions): Array<Step> => {
  if (options.abortSignal?.aborted) throw abortReason(options.abortSignal)
  refuseImages(options.prompt)
  const answer = answerFor(options.prompt)
  if (answer.kind === "fail") throw answer.error
  const effort = options.providerOptions?.offline?.effort
  return stepsFor(options.prompt, answer, typeof effort === "string" ? effort : undefined, slowOf(options.prompt))
}

class OfflineLanguageModel implements LanguageModelV3 {
  readonly specificationVersion = "v3"
  readonly provider = "offline"
  // every URL is "supported": the SDK passes it through instead of downloading it, and the model refuses images itself
  readonly supportedUrls = { "*/*": [/^/] }

  constructor(readonly modelId: string) {}

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const steps = plan(options)
    const content: Array<LanguageModelV3Content> = []
    let finish: Extract<LanguageModelV3StreamPart, { type: "finish" }> | undefined
    for (const { part, waitMs } of steps) {
      await wait(waitMs, options.abortSignal)
      switch (part.type) {
        case "reasoning-delta":
        case "text-delta": {
          const type = part.type === "text-delta" ? "text" : "reasoning"
          const previous = content[content.length - 1]
          if (previous?.type === type) content[content.length - 1] = { type, text: previous.text + part.delta }
          else content.push({ type, text: part.delta })
          break
        }
        case "tool-call":
          content.push(part)
          break
        case "finish":
          finish = part
          break
        default:
          break
      }
    }
    return { content, finishReason: finish!.finishReason, usage: finish!.usage, warnings: [] }
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const steps = plan(options)
    // a reader that cancels the stream ends a /slow wait as an abort would, but quietly
    const cancelled = new AbortController()
    const signal = options.abortSignal === undefined ? cancelled.signal : AbortSignal.any([options.abortSignal, cancelled.signal])
    let next = 0
    const stream = new ReadableStream<LanguageModelV3StreamPart>({
      async pull(controller) {
        const step = steps[next++]
        try {
          await wait(step.waitMs, signal)
        } catch (reason) {
          if (!cancelled.signal.aborted) controller.error(reason)
          return
        }
        controller.enqueue(step.part)
        if (next === steps.length) controller.close()
      },
      cancel() {
        cancelled.abort()
      }
    })
    return { stream }
  }
}

/** The offline model `offline:<modelId>`; every name answers the same way. */
export const offlineModel = (modelId: string): LanguageModelV3 => new OfflineLanguageModel(modelId)
