/**
 * One assistant turn as a process (spec 3.2): it records itself on the conversation actor, streams
 * the model's parts to its sink as the spec's events, calls tools through the checkpoint, parks the
 * calls that need approval, asks questions and waits for their answers, checks the goal after each
 * round, and records how it ended. The client going away does not stop it; only its person's
 * cancel (any node) or the process shutting down does.
 */
import { generateText, jsonSchema, type ModelMessage, stepCountIs, streamText, type ToolSet, dynamicTool } from "ai"
import { Cause, Effect, Exit, Option, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import { AskQuestion, CloseQuestion, type ConversationCommand, FinishRun, ParkToolCall, RewriteSummary, StartTurn } from "../../actors/conversation/protocol.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type Invocation, invoke, type Registry } from "../Capabilities.ts"
import { newPublicId } from "../ApiKeyToken.ts"
import { chargeTurn, checkModelKeyLimit } from "./Billing.ts"
import { findConversation, loadHistory, olderMessages } from "./ChatQueries.ts"
import {
  type ChatEvent,
  type ParkedCard,
  previewOf,
  type ToolCallRecord,
  type TurnFailure,
  type TurnResult,
  type TurnSink,
  type Usage
} from "./ChatEvents.ts"
import { isTextType, readAttachments } from "./Files.ts"
import { classifyModelError } from "./models/errors.ts"
import { OfflineCannotReadFile } from "./models/offline.ts"
import type { ResolvedModel } from "./models/resolve.ts"
import { FailureDescriber } from "../Failures.ts"
import { AssistantSettings } from "./Settings.ts"
import { type AgentTool, ASK_USER, ASK_USER_DESCRIPTION, askUserSchema } from "./Tools.ts"
import { type LiveTurn, TurnRegistry } from "./TurnRegistry.ts"

/** Spec 8: the model reads the last 50 messages word for word, this turn's own message included. */
export const VERBATIM_MESSAGES = 50
/** Spec 8: the summary of older messages is rewritten about once every five turns. */
export const SUMMARY_EVERY_TURNS = 5
/** Spec 8: a question waits five minutes, then closes with reason `timeout`. */
export const QUESTION_WAIT_MS = 5 * 60 * 1000
/** A turn still running after this is stopped (`engine_aborted`); runs older than that count as abandoned. */
export const MAX_TURN_MS = 60 * 60 * 1000
/** Model calls and tool calls one round may make. */
const MAX_STEPS_PER_ROUND = 8
const QUESTION_CHECK_MS = 100

export interface Goal {
  readonly statement: string
  readonly maxRounds: number
}

/** A turn the checkpoint let through, with everything 7.1 checks already passed. */
export interface PreparedTurn {
  readonly invocation: Invocation
  /** The place the turn's tool calls act in. */
  readonly path: { readonly orgSlug: string; readonly workspaceSlug: string }
  /** The person the turn belongs to: the session's, or the key's creator. */
  readonly userId: string
  /** A cnv_ id or UUID naming an existing conversation; null starts one. */
  readonly conversationRef: string | null
  /** The public id of the conversation a first turn starts (A2A derives its context id from it); null: a new one. */
  readonly newConversationPublicId: string | null
  readonly content: string
  readonly attachments: ReadonlyArray<string>
  readonly goal: Goal | null
  readonly turnId: string | null
  readonly model: ResolvedModel
  readonly tools: ReadonlyArray<AgentTool>
  readonly registry: Registry
}

/** A conversation's UUID from a generated id (`<prefix>_<32 hex>`), so a retry under the same Idempotency-Key names the same conversation. */
const uuidOf = (id: string): string => {
  const hex = id.slice(id.lastIndexOf("_") + 1).padEnd(32, "0").slice(0, 32)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

const failure = (code: string | null, message: string, reason: string | null = null): TurnFailure => ({ code, reason, message })

const zeroUsage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 }

const addUsage = (total: Usage, part: { readonly inputTokens?: number | undefined; readonly outputTokens?: number | undefined }): Usage => {
  const promptTokens = total.promptTokens + (part.inputTokens ?? 0)
  const completionTokens = total.completionTokens + (part.outputTokens ?? 0)
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens }
}

class TurnAborted extends Error {}

/** A failure that ends the turn with the given 7.2 code, wherever in the loop it is found. */
class TurnFailed extends Error {
  constructor(readonly failure: TurnFailure) {
    super(failure.message)
  }
}

const systemPrompt = (turn: PreparedTurn, summary: string | null): string =>
  [
    `You are the assistant of the workspace ${turn.path.orgSlug}/${turn.path.workspaceSlug}. Act through your tools;`,
    `ask the person with ${ASK_USER} when you need a decision. Tool calls that need approval are parked for the person to approve.`,
    ...(summary === null ? [] : [`Summary of earlier messages: ${summary}`]),
    ...(turn.goal === null ? [] : [`Goal: ${turn.goal.statement}`])
  ].join("\n")

const JUDGE_PROMPT =
  "[judge] You check whether the assistant's last reply meets the goal below. Answer only JSON {\"met\": boolean, \"reason\": string}."

const SUMMARY_PROMPT =
  "[summarise] Summarise the conversation below in at most 300 words, keeping names, decisions and open questions."

const parseVerdict = (text: string): { readonly met: boolean; readonly reason: string } => {
  try {
    const start = text.indexOf("{")
    const parsed = JSON.parse(text.slice(start, text.lastIndexOf("}") + 1)) as { met?: unknown; reason?: unknown }
    return { met: parsed.met === true, reason: typeof parsed.reason === "string" ? parsed.reason : "" }
  } catch {
    // a judge that does not answer in JSON cannot hold the turn back
    return { met: true, reason: "the goal check gave no verdict" }
  }
}

/** The turn: runs to its end and tells the sink; never fails (a failure is the sink's `done`). */
export const executeTurn = (turn: PreparedTurn, sink: TurnSink) =>
  Effect.gen(function* () {
    // the turn runs effects of many services (models, billing, files, the checkpoint): all the node provides
    const runtime = yield* Effect.runtime<any>()
    const host = yield* ActorHost
    const registry = yield* TurnRegistry
    const settings = yield* AssistantSettings
    const describe = yield* FailureDescriber
    const runExit = Runtime.runPromiseExit(runtime)
    const run = async <A, E>(effect: Effect.Effect<A, E, any>): Promise<A> => {
      const exit = await runExit(effect)
      if (Exit.isSuccess(exit)) return exit.value
      throw Option.getOrElse(Cause.failureOption(exit.cause), () => Cause.squash(exit.cause))
    }
    const clock = yield* Effect.clock
    const now = () => clock.unsafeCurrentTimeMillis()
    const { invocation } = turn
    const { workspaceId } = invocation
    const orgId = invocation.orgId!
    const meta = (commandId: string = randomUUID()): CommandMeta => ({ commandId, at: new Date(now()).toISOString(), actor: invocation.meta.actor })
    const send = (conversationId: string, command: ConversationCommand, commandId?: string) =>
      run(host.send(ConversationActor, conversationId, command, meta(commandId)))

    let ended = false
    const once: TurnSink = {
      event: (event) => {
        if (!ended) sink.event(event)
      },
      done: (outcome) => {
        if (ended) return
        ended = true
        sink.done(outcome)
      }
    }
    yield* Effect.promise(() =>
      turnProcess(once).catch((error) => {
        // storage failed outside the model loop (loading the history, say): the stream still ends as 7.2 says
        console.error("assistant: turn failed", error)
        once.done({ failure: failure("engine_unavailable", "the assistant engine could not reach its storage; retry") })
      })
    )

    async function turnProcess(sink: TurnSink): Promise<void> {
      if (!registry.accepting()) return sink.done({ failure: failure("engine_unavailable", "the assistant engine is shutting down; retry on another node") })

      // the conversation: an existing one of this workspace, or a new one
      let conversationId: string
      let conversationPublicId: string
      let create = false
      if (turn.conversationRef !== null) {
        const found = await run(findConversation(workspaceId!, turn.conversationRef))
        if (found === undefined) {
          return sink.done({ failure: failure("conversation_not_found", `no conversation ${turn.conversationRef} in this workspace`) })
        }
        conversationId = found.conversationId
        conversationPublicId = found.publicId
      } else {
        conversationId = uuidOf(invocation.newId("conversation"))
        conversationPublicId = turn.newConversationPublicId ?? invocation.newId("cnv")
        create = true
      }
      const history = create
        ? { messages: [], older: 0, summary: null, messageCount: 0, turnCount: 0 }
        : await run(loadHistory(conversationId, VERBATIM_MESSAGES - 1))
      const summary = history.summary?.text ?? null

      const runId = invocation.newId("tse")
      const userMessageId = invocation.newId("msg")
      const assistantMessageId = invocation.newId("msg")
      try {
        await send(
          conversationId,
          new StartTurn({
            conversationId,
            create,
            publicId: conversationPublicId,
            orgId,
            workspaceId: workspaceId!,
            userId: turn.userId,
            apiKeyId: invocation.principal.apiKeyId,
            runId,
            turnId: turn.turnId,
            userMessageId,
            content: turn.content,
            attachments: [...turn.attachments],
            model: turn.model.modelId,
            tier: turn.model.tier,
            effort: turn.model.effort,
            carriedSummary: summary !== null
          }),
          // a retry under the same Idempotency-Key records the same run once
          `${invocation.meta.commandId}:start`
        )
      } catch (error) {
        const tag = (error as { _tag?: string })._tag
        if (tag === "ConversationNotFound") return sink.done({ failure: failure("conversation_not_found", `no conversation ${turn.conversationRef} in this workspace`) })
        if (tag === "TurnIdInUse") {
          return sink.done({ failure: failure("assistant_run_not_recorded", `a turn with id ${turn.turnId} is still running in this conversation; nothing was answered`, "turn_id_in_use") })
        }
        return sink.done({ failure: failure("assistant_run_not_recorded", "the turn could not be recorded as a run; nothing was answered") })
      }
      sink.event({ type: "run", runId })

      const live: LiveTurn = { runId, conversationId, turnId: turn.turnId, userId: turn.userId, abort: new AbortController(), stopReason: undefined }
      const unregister = registry.register(live)
      const signal = live.abort.signal
      const limit = setTimeout(() => {
        live.stopReason = "limit"
        live.abort.abort()
      }, MAX_TURN_MS).unref()

      let reply = ""
      let usage = zeroUsage
      const toolCalls: Array<ToolCallRecord> = []
      const parkedCards: Array<ParkedCard> = []
      const openQuestions = new Set<string>()
      let stepIndex = 0
      let failed: TurnFailure | undefined

      const emit = (event: ChatEvent) => sink.event(event)

      const callTool = async (tool: AgentTool, input: unknown, toolCallId: string) => {
        const started = now()
        const capability = tool.capability.name
        if (tool.capability.needsApproval) {
          const approvalId = randomUUID()
          const publicId = newPublicId("apr")
          const expiresAt = new Date(started + settings.approvalTtlMs).toISOString()
          await send(
            conversationId,
            new ParkToolCall({
              runId,
              approvalId,
              publicId,
              toolCallId,
              capability,
              input: input as any,
              inputPreview: previewOf(input),
              userId: turn.userId,
              expiresAt
            })
          )
          emit({ type: "approval-required", approvalId: publicId, capability, inputPreview: previewOf(input), riskLevel: tool.riskLevel, expiresAt })
          parkedCards.push({ approvalId: publicId, capability, expiresAt })
          toolCalls.push({ toolCallId, toolName: capability, outcome: "parked", durationMs: Math.max(0, now() - started), approvalId: publicId })
          return { parked: true, approvalId: publicId, expiresAt, note: "The call waits for the person's approval; it has not run." }
        }
        emit({ type: "tool-call-start", toolCallId, capability, inputPreview: previewOf(input), riskLevel: "low" })
        const exit = await runExit(
          invoke({ authorization: undefined, principal: invocation.principal, surface: "agent", capability, path: turn.path, input: Effect.succeed(input) })
        )
        const durationMs = Math.max(0, now() - started)
        if (Exit.isSuccess(exit)) {
          emit({ type: "tool-call-end", toolCallId, status: "completed", durationMs, output: exit.value })
          toolCalls.push({ toolCallId, toolName: capability, outcome: signal.aborted ? "cancelled" : "completed", durationMs })
          return exit.value
        }
        // a tool call's errorReason is the failure's reason in the one error table, else its code
        const described = describe(exit.cause)
        const errorReason = described.reason ?? described.code
        emit({ type: "tool-call-end", toolCallId, status: "failed", durationMs, errorReason })
        toolCalls.push({ toolCallId, toolName: capability, outcome: signal.aborted ? "cancelled" : "failed", durationMs })
        // a service the turn depends on is down: the turn fails with it (7.2) rather than guess on
        if (errorReason === "codegraph_unavailable") throw new TurnFailed(failure("codegraph_unavailable", described.message))
        return { error: errorReason, message: described.message }
      }

      const askUser = async (input: { question: string; options?: ReadonlyArray<string> }, toolCallId: string) => {
        const started = now()
        const questionId = newPublicId("qst")
        const options = [...(input.options ?? [])]
        const deadline = new Date(started + QUESTION_WAIT_MS).toISOString()
        registry.watchQuestion(questionId)
        try {
          await send(conversationId, new AskQuestion({ runId, questionId, question: input.question, options, userId: turn.userId, deadline }))
          openQuestions.add(questionId)
          emit({ type: "question", id: questionId, question: input.question, options })
          for (;;) {
            if (signal.aborted) throw new TurnAborted()
            const outcome = registry.questionOutcome(questionId)
            const timedOut = outcome === undefined && now() >= Date.parse(deadline)
            if (outcome !== undefined || timedOut) {
              if (timedOut) await send(conversationId, new CloseQuestion({ questionId, reason: "timeout" }))
              openQuestions.delete(questionId)
              const answered = outcome?.status === "answered"
              emit(answered ? { type: "question-end", id: questionId, status: "answered" } : { type: "question-end", id: questionId, status: "closed", reason: "timeout" })
              toolCalls.push({ toolCallId, toolName: ASK_USER, outcome: "completed", durationMs: Math.max(0, now() - started) })
              return answered ? { answer: outcome.answer } : { timedOut: true, options }
            }
            await new Promise((resolve) => setTimeout(resolve, QUESTION_CHECK_MS))
          }
        } finally {
          registry.unwatchQuestion(questionId)
        }
      }

      const tools: ToolSet = {}
      for (const tool of turn.tools) {
        tools[tool.toolName] = dynamicTool({
          description: tool.capability.description,
          inputSchema: jsonSchema(tool.inputSchema as any),
          execute: (input, options) => callTool(tool, input, options.toolCallId)
        })
      }
      tools[ASK_USER] = dynamicTool({
        description: ASK_USER_DESCRIPTION,
        inputSchema: jsonSchema(askUserSchema as any),
        execute: (input, options) => askUser(input as { question: string; options?: ReadonlyArray<string> }, options.toolCallId)
      })

      const capabilityOf = (toolName: string) => turn.tools.find((t) => t.toolName === toolName)?.capability.name ?? toolName

      try {
        const files = await run(readAttachments(workspaceId!, turn.attachments))
        const userContent: Array<any> = [{ type: "text", text: turn.content }]
        for (const file of files) {
          if (isTextType(file.mediaType)) userContent.push({ type: "text", text: `Attachment ${file.name}:\n${Buffer.from(file.bytes).toString("utf8")}` })
          else userContent.push({ type: "file", data: file.bytes, mediaType: file.mediaType, filename: file.name })
        }
        const messages: Array<ModelMessage> = [
          ...history.messages.map((m): ModelMessage => (m.role === "user" ? { role: "user", content: m.content } : { role: "assistant", content: m.content })),
          { role: "user", content: userContent }
        ]
        const system = systemPrompt(turn, summary)
        const rounds = turn.goal?.maxRounds ?? 1
        for (let round = 1; round <= rounds; round++) {
          if (turn.model.paidBy === "organization") await run(checkModelKeyLimit({ orgId, now: new Date(now()) }))
          let roundReply = ""
          const reasoningStarted = new Map<string, number>()
          const result = streamText({
            model: turn.model.model,
            system,
            messages,
            tools,
            stopWhen: stepCountIs(MAX_STEPS_PER_ROUND),
            providerOptions: turn.model.providerOptions,
            abortSignal: signal,
            maxRetries: 0,
            // the error reaches the loop below as an `error` part; the SDK's default would also log it
            onError: () => {}
          })
          for await (const part of result.fullStream) {
            switch (part.type) {
              case "start-step":
                emit({ type: "step-start", stepIndex })
                break
              case "finish-step":
                usage = addUsage(usage, part.usage)
                emit({ type: "step-finish", stepIndex: stepIndex++ })
                break
              case "text-delta":
                if (part.text === "") break
                reply += part.text
                roundReply += part.text
                emit({ type: "text", text: part.text })
                break
              case "reasoning-start": {
                const reasoningId = `${stepIndex}:${part.id}`
                reasoningStarted.set(reasoningId, now())
                emit({ type: "reasoning-start", reasoningId })
                break
              }
              case "reasoning-delta":
                emit({ type: "reasoning-delta", reasoningId: `${stepIndex}:${part.id}`, text: part.text })
                break
              case "reasoning-end": {
                const reasoningId = `${stepIndex}:${part.id}`
                emit({ type: "reasoning-end", reasoningId, durationMs: Math.max(0, now() - (reasoningStarted.get(reasoningId) ?? now())) })
                break
              }
              case "tool-input-start":
                emit({ type: "tool-input-start", toolCallId: part.id, capability: capabilityOf(part.toolName) })
                break
              case "tool-input-delta":
                emit({ type: "tool-input-delta", toolCallId: part.id, delta: part.delta })
                break
              case "tool-error": {
                const error = part.error
                if (error instanceof TurnFailed || error instanceof TurnAborted) throw error
                // a call the model made with input its tool does not accept, or a tool that threw
                const errorReason = error instanceof Error ? error.name : "tool_error"
                emit({ type: "tool-call-end", toolCallId: part.toolCallId, status: "failed", durationMs: 0, errorReason })
                toolCalls.push({ toolCallId: part.toolCallId, toolName: capabilityOf(part.toolName), outcome: signal.aborted ? "cancelled" : "failed", durationMs: 0 })
                break
              }
              case "error":
                throw part.error
              default:
                break
            }
          }
          if (signal.aborted) throw new TurnAborted()
          if (turn.goal === null || round === rounds) break
          const judged = await generateText({
            model: turn.model.model,
            system: `${JUDGE_PROMPT}\nGoal: ${turn.goal.statement}`,
            messages: [...messages, { role: "assistant", content: roundReply }],
            providerOptions: turn.model.providerOptions,
            abortSignal: signal,
            maxRetries: 0
          })
          usage = addUsage(usage, judged.usage)
          const verdict = parseVerdict(judged.text)
          if (verdict.met) break
          messages.push(...(await result.response).messages)
          messages.push({ role: "user", content: `[goal check] The goal is not met yet: ${verdict.reason}. Continue.` })
        }
      } catch (error) {
        if (error instanceof TurnFailed) failed = error.failure
        else if (signal.aborted || error instanceof TurnAborted) {
          if (live.stopReason !== "cancel") failed = failure("engine_aborted", "the turn was cancelled by the engine before it answered")
        } else failed = describeTurnError(error, turn.model.paidBy)
      }

      // the turn ended: stopped on purpose, failed, or finished
      const stopped = failed === undefined && live.stopReason === "cancel"
      for (const questionId of openQuestions) emit({ type: "question-end", id: questionId, status: "closed", reason: "ended" })
      const result: TurnResult = {
        conversationId,
        conversationPublicId,
        userMessageId,
        assistantMessageId,
        runId,
        reply,
        parkedCards,
        toolCalls,
        stopped
      }
      const saved = failed === undefined && (reply !== "" || !stopped)
      try {
        await send(
          conversationId,
          new FinishRun({
            runId,
            status: failed !== undefined ? "failed" : stopped ? "stopped" : "finished",
            assistantMessageId: saved ? assistantMessageId : null,
            reply,
            result: failed === undefined ? (result as any) : null,
            usage,
            error: failed ?? null
          })
        )
        if (usage.totalTokens > 0) await run(chargeTurn({ orgId, workspaceId: workspaceId!, runId, usage, paidBy: turn.model.paidBy, meta: meta() }))
        if (failed === undefined) await rewriteSummaryIfDue(turn, conversationId, run, send)
      } catch (error) {
        console.error(`assistant: recording the end of run ${runId} failed`, error)
      } finally {
        clearTimeout(limit)
        unregister()
      }
      if (failed !== undefined) return sink.done({ failure: failed })
      emit({ type: "usage", usage })
      sink.done({ result })
    }
  })

/** 7.2's code for what broke the turn. */
const describeTurnError = (error: unknown, paidBy: ResolvedModel["paidBy"]): TurnFailure => {
  const tag = (error as { _tag?: string })?._tag
  if (tag === "AttachmentRefused") {
    const refused = error as { reason: string; message: string }
    return failure("attachment_refused", refused.message, refused.reason)
  }
  if (error instanceof OfflineCannotReadFile || tag === "OfflineCannotReadFile") {
    return failure("attachment_refused", "the model of this turn cannot read an attached file", "unsupported_by_model")
  }
  if (tag === "ModelKeyLimitReached") return failure("assistant_model_key_limit", "the organization's model key reached its daily spend limit")
  if (tag === "HostUnavailable" || tag === "DbError" || tag === "Unavailable") {
    return failure("engine_unavailable", "the assistant engine could not reach its storage; retry")
  }
  const classified = classifyModelError(error, paidBy)
  return failure(classified.code, classified.message)
}

/**
 * Spec 2.5: messages older than the verbatim window are summarised into one note, rewritten about
 * once every five turns. The run after a rewrite carries the new summary.
 */
const rewriteSummaryIfDue = async (
  turn: PreparedTurn,
  conversationId: string,
  run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>,
  send: (conversationId: string, command: any) => Promise<unknown>
) => {
  // the next turn reads the last 49 messages and its own: everything before those is the summary's
  const history = await run(loadHistory(conversationId, VERBATIM_MESSAGES - 1))
  if (history.older === 0) return
  if (history.summary !== null && history.turnCount - history.summary.atTurn < SUMMARY_EVERY_TURNS) return
  const older = await run(olderMessages(conversationId, history.older))
  const summarised = await generateText({
    model: turn.model.model,
    system: SUMMARY_PROMPT,
    messages: older.map((m): ModelMessage => (m.role === "user" ? { role: "user", content: m.content } : { role: "assistant", content: m.content })),
    maxRetries: 0
  })
  await send(conversationId, new RewriteSummary({ summary: summarised.text, coversMessages: history.older, atTurn: history.turnCount }))
}
