/**
 * Spec 8's memory of a conversation: the model reads the last messages word for word and a summary
 * of the older ones, rewritten about once every five turns. A run that starts after a rewrite
 * carries the new summary.
 */
import { generateText, type ModelMessage } from "ai"
import { Effect } from "effect"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import type { RunFinished } from "../../actors/conversation/events.ts"
import { RewriteSummary } from "../../actors/conversation/protocol.ts"
import { summaryDue } from "../../actors/conversation/state.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import type { Signal } from "../../streams/LogSignals.ts"
import { type ChatMessage, loadHistory, olderMessages } from "./Queries.ts"
import type { ResolvedModel } from "./models/resolve.ts"
import type { Transcript } from "./Api.ts"
import { personSealer } from "../audit/PersonalData.ts"

/** Spec 8: the model reads the last 50 messages word for word, this turn's own message included. */
export const VERBATIM_MESSAGES = 50
/** How long the summary's history read waits for the read models to hold the run's end. */
const SUMMARY_READ_TIMEOUT_MS = 10_000

const SUMMARY_PROMPT =
  "[summarise] Summarise the conversation below in at most 300 words, keeping names, decisions and open questions."

/** A stored message as the model reads it. */
export const modelMessageOf = (m: ChatMessage): ModelMessage => {
  // an erased person's words are gone; the model is told so rather than sent an empty message
  const content = m.erased ? ERASED_MESSAGE : m.content
  return m.role === "user" ? { role: "user", content } : { role: "assistant", content }
}

/** What the model reads in place of an erased message. */
const ERASED_MESSAGE = "[erased]"

/** Rewrites the summary when due after the run `finished` ended; the rewrite's command id derives from the run, so it happens once. */
export const rewriteSummaryIfDue = (model: ResolvedModel, finished: Signal<RunFinished>, meta: CommandMeta) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const { conversationId, runId } = finished.event
    const runEnd = new Map([[finished.position.partition, finished.position.offset]])
    // on the conversation's owner, its state tells at once whether the history has outgrown what
    // a turn sends word for word; mostly it has not, and nothing is waited for or read
    const held = host.peek(ConversationActor, conversationId, runEnd)
    if (held?._tag === "Active" && held.messageCount <= VERBATIM_MESSAGES - 1) return
    // the history must hold the run's own messages
    yield* Effect.promise(() => host.awaitProjected(runEnd, SUMMARY_READ_TIMEOUT_MS))
    // the next turn reads the last 49 messages and its own: everything before those is the summary's
    const history = yield* loadHistory(conversationId, VERBATIM_MESSAGES - 1)
    if (history.older === 0) return
    // not due as the read models stand: no model call (the conversation has the last word)
    if (!summaryDue(history.summary, history.turnCount)) return
    const older = yield* olderMessages(conversationId, history.older)
    const summarised = yield* Effect.tryPromise(() =>
      generateText({ model: model.model, system: SUMMARY_PROMPT, messages: older.map(modelMessageOf), maxRetries: 0 })
    )
    // written from the person's messages: sealed under their key like them (actors/personal.ts)
    const sealer = yield* personSealer(finished.event.run.userId)
    yield* host.send(
      ConversationActor,
      conversationId,
      new RewriteSummary({ summary: sealer.seal(summarised.text), coversMessages: history.older, atTurn: history.turnCount }),
      { ...meta, commandId: `summary_${runId}` }
    )
  })

const RUN_SUMMARY_PROMPT =
  "[summarise] Summarise the assistant run below in at most 80 words: what the person asked, which tools were called and how each ended, what was answered, and anything left open."

/** A run's record as the model reads it: one message, line by line. */
const runText = (run: Transcript): string =>
  [
    ...(run.userMessage === null ? [] : [`Request: ${run.userMessage.content}`]),
    ...run.toolCalls.map((call) => `Tool call: ${call.toolName} (${call.outcome})`),
    ...run.approvals.map((approval) => `Approval: ${approval.capability} ${approval.inputPreview} (${approval.status})`),
    ...run.questions.map((question) => `Question: ${question.question} (${question.answer === null ? question.status : `answered: ${question.answer}`})`),
    ...(run.execution === null ? [] : [`Approved call: ${run.execution.status}${run.execution.reason === undefined ? "" : ` (${run.execution.reason})`}`]),
    ...(run.reply === null || run.reply === "" ? [] : [`Reply: ${run.reply}`]),
    ...(run.error === null ? [] : [`Error: ${run.error.message}`]),
    `Status: ${run.status}`
  ].join("\n")

/** A short summary of one run written by the model, and the tokens it took. */
export const writeRunSummary = (model: ResolvedModel, run: Transcript) =>
  Effect.map(
    Effect.tryPromise({
      try: (signal) =>
        generateText({
          model: model.model,
          system: RUN_SUMMARY_PROMPT,
          messages: [{ role: "user", content: runText(run) }],
          providerOptions: model.providerOptions,
          abortSignal: signal,
          maxRetries: 0
        }),
      catch: (error) => error
    }),
    (written) => {
      const promptTokens = written.usage.inputTokens ?? 0
      const completionTokens = written.usage.outputTokens ?? 0
      return { text: written.text, usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens } }
    }
  )
