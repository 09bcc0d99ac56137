/**
 * The agent's tools as the model calls them in a turn: a capability runs through the checkpoint
 * (`invoke`) or, when it needs approval, is parked for the person; `ask_user` asks the person and
 * waits for the answer. Each call is told as the spec's events and kept as the turn's record.
 */
import { dynamicTool, jsonSchema, type JSONSchema7, NoSuchToolError, type ToolSet } from "ai"
import type { Json } from "../../actors/kernel.ts"
import { personalOpener, type PersonSealer } from "../audit/PersonalData.ts"
import { Cause, Effect, Exit, Option, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { AskQuestion, CloseQuestion, ParkToolCall } from "../../actors/conversation/protocol.ts"
import { newPublicId } from "../identity/ApiKeyToken.ts"
import { invoke } from "../checkpoint/Checkpoint.ts"
import { errorBody, FailureDescriber, type FailureDescription, isRefusal } from "../platform/Failures.ts"
import { checkEntitlement } from "../packs/Entitlement.ts"
import type { ChatEvent, ParkedCard, ToolCallRecord } from "../platform/Wire.ts"
import { previewOf, type TurnFailure } from "./ChatEvents.ts"
import { AssistantSettings } from "./Settings.ts"
import { type AgentTool, ASK_USER, ASK_USER_DESCRIPTION, askUserSchema, isAgentCapability, toolNameOf } from "./Tools.ts"
import type { AnyCapability } from "../checkpoint/Capability.ts"
import type { PreparedTurn } from "./PreparedTurn.ts"
import { failure, type TurnRecorder } from "./TurnRecording.ts"
import { questionTimeoutCommandId, TurnRegistry } from "./TurnRegistry.ts"

/** Spec 8: a question waits five minutes, then closes with reason `timeout`. */
export const QUESTION_WAIT_MS = 5 * 60 * 1000

/** The turn was aborted while a tool waited. */
export class TurnAborted extends Error {}

/** A failure that ends the turn with the given 7.2 code, wherever in the loop it is found. */
export class TurnFailed extends Error {
  constructor(readonly failure: TurnFailure) {
    super(failure.message)
  }
}

/** What the tools of one turn act on and report to. */
export interface AgentToolsContext {
  readonly turn: PreparedTurn
  readonly runId: string
  readonly conversationId: string
  readonly signal: AbortSignal
  readonly record: TurnRecorder
  readonly emit: (event: ChatEvent) => void
  readonly toolCalls: Array<ToolCallRecord>
  readonly parkedCards: Array<ParkedCard>
  /** Questions asked and not yet answered or closed. */
  readonly openQuestions: Set<string>
  /** The turn's person's: a parked call's input goes to the log sealed under it (docs/audit.md). */
  readonly sealer: PersonSealer
}

/** The capability a tool name stands for, offered or not (the name itself for `ask_user`). */
export const capabilityOf = (capabilities: ReadonlyArray<AnyCapability>, toolName: string): string =>
  capabilities.find((c) => toolNameOf(c.name) === toolName)?.name ?? toolName

/**
 * How one turn runs its tools' calls. The `ai` SDK's tools are shared by every turn (`sdkToolsOf`);
 * each call finds its turn's `TurnToolCalls` in the SDK's `experimental_context`, which the turn
 * hands to `streamText`: a turn waiting for its model holds no tool objects of its own.
 */
export interface TurnToolCalls {
  readonly execute: (tool: AgentTool | typeof ASK_USER, input: unknown, toolCallId: string) => Promise<unknown>
}

/** The name the model calls a tool by. */
export const toolNameOfCall = (tool: AgentTool | typeof ASK_USER): string => (tool === ASK_USER ? ASK_USER : tool.toolName)

const callsOf = (options: { readonly experimental_context?: unknown }) => options.experimental_context as TurnToolCalls

const askUserTool = dynamicTool({
  description: ASK_USER_DESCRIPTION,
  inputSchema: jsonSchema(askUserSchema as JSONSchema7),
  execute: (input, options) => callsOf(options).execute(ASK_USER, input, options.toolCallId)
})

/** The SDK's tool of each capability, made once: its schema and description are the capability's, whoever calls it. */
const sdkTools = new WeakMap<AnyCapability, ReturnType<typeof dynamicTool>>()

const sdkToolOf = (tool: AgentTool) => {
  const shared = sdkTools.get(tool.capability)
  if (shared !== undefined) return shared
  const made = dynamicTool({
    description: tool.capability.description,
    inputSchema: jsonSchema(tool.inputSchema as JSONSchema7),
    execute: (input, options) => callsOf(options).execute(tool, input, options.toolCallId)
  })
  sdkTools.set(tool.capability, made)
  return made
}

/** The `ai` SDK's tools for a turn's tools (and `ask_user`): shared objects, run through the turn's `TurnToolCalls`. */
export const sdkToolsOf = (tools: ReadonlyArray<AgentTool>): ToolSet => {
  const set: ToolSet = {}
  for (const tool of tools) set[tool.toolName] = sdkToolOf(tool)
  set[ASK_USER] = askUserTool
  return set
}

/** The turn's side of its tools: how it runs their calls, and how it repairs a call of a tool it did not offer. */
export const agentToolSet = (context: AgentToolsContext) =>
  Effect.gen(function* () {
    // a capability's effect may need any service the node provides
    const runtime = yield* Effect.runtime<any>()
    const registry = yield* TurnRegistry
    const settings = yield* AssistantSettings
    const describe = yield* FailureDescriber
    const clock = yield* Effect.clock
    const now = () => clock.unsafeCurrentTimeMillis()
    const { turn, runId, conversationId, signal, record, emit, toolCalls, sealer } = context

    const parkCall = (tool: AgentTool, input: unknown, toolCallId: string) =>
      Effect.gen(function* () {
        const started = now()
        const capability = tool.capability.name
        const approvalId = randomUUID()
        const publicId = newPublicId("apr")
        const expiresAt = new Date(started + settings.approvalTtlMs).toISOString()
        yield* record(
          new ParkToolCall({ runId, approvalId, publicId, toolCallId, capability, input: sealer.sealJson(input as Json), inputPreview: sealer.seal(previewOf(input)), userId: turn.userId, expiresAt })
        )
        emit({ type: "approval-required", approvalId: publicId, capability, inputPreview: previewOf(input), riskLevel: tool.riskLevel, expiresAt })
        context.parkedCards.push({ approvalId: publicId, capability, expiresAt })
        toolCalls.push({ toolCallId, toolName: capability, outcome: "parked", durationMs: Math.max(0, now() - started), approvalId: publicId })
        return { parked: true, approvalId: publicId, expiresAt, note: "The call waits for the person's approval; it has not run." }
      })

    const callTool = (tool: AgentTool, input: unknown, toolCallId: string) =>
      Effect.gen(function* () {
        if (tool.capability.needsApproval) return yield* parkCall(tool, input, toolCallId)
        const started = now()
        const capability = tool.capability.name
        emit({ type: "tool-call-start", toolCallId, capability, inputPreview: previewOf(input), riskLevel: "low" })
        const exit = yield* Effect.exit(
          invoke({ authorization: undefined, principal: turn.invocation.principal, surface: "agent", capability, path: turn.path, input: Effect.succeed(input) })
        )
        const durationMs = Math.max(0, now() - started)
        if (Exit.isSuccess(exit)) {
          emit({ type: "tool-call-end", toolCallId, status: "completed", durationMs, output: exit.value })
          toolCalls.push({ toolCallId, toolName: capability, outcome: signal.aborted ? "cancelled" : "completed", durationMs })
          return exit.value
        }
        const described = describe(exit.cause)
        const errorReason = reasonOf(described)
        // the failed call's output is the one error body, as the model reads it and REST and MCP answer it
        emit({ type: "tool-call-end", toolCallId, status: "failed", durationMs, errorReason, output: errorBody(described) })
        toolCalls.push({ toolCallId, toolName: capability, outcome: signal.aborted ? "cancelled" : isRefusal(described) ? "denied" : "failed", durationMs })
        // a service the turn depends on is down: the turn fails with it (7.2) rather than guess on
        if (errorReason === "codegraph_unavailable") return yield* Effect.fail(new TurnFailed(failure("codegraph_unavailable", described.message)))
        return errorBody(described)
      })

    /**
     * A tool the model called that the turn did not offer: when it is a capability of a pack the
     * organization has not installed, the checkpoint's own refusal (spec 7.3, `capability_not_installed`
     * with the pack and how to install it); otherwise undefined (the SDK's unknown-tool failure).
     */
    const unofferedRefusal = (toolName: string): Promise<FailureDescription | undefined> => {
      const capability = turn.registry.all.find((c) => toolNameOf(c.name) === toolName)
      if (capability === undefined || !isAgentCapability(capability)) return Promise.resolve(undefined)
      return runExit(checkEntitlement(capability, turn.invocation.orgId)).then((exit) => (Exit.isFailure(exit) ? describe(exit.cause) : undefined))
    }

    const askUser = (input: { question: string; options?: ReadonlyArray<string> }, toolCallId: string) =>
      Effect.gen(function* () {
        const started = now()
        const questionId = newPublicId("qst")
        const options = [...(input.options ?? [])]
        const deadline = new Date(started + QUESTION_WAIT_MS).toISOString()
        // listening before the question is asked: its answer, through any node, cannot come first
        const waiting = registry.awaitQuestion(conversationId, questionId, { timeoutMs: QUESTION_WAIT_MS, signal })
        return yield* Effect.gen(function* () {
          yield* record(new AskQuestion({ runId, questionId, question: sealer.seal(input.question), options: options.map(sealer.seal), userId: turn.userId, deadline }))
          context.openQuestions.add(questionId)
          emit({ type: "question", id: questionId, question: input.question, options })
          const outcome = yield* Effect.promise(() => waiting.outcome)
          if (outcome.status === "aborted") {
            // cut off by the stop: the call is the turn's record too (spec 2.3 `cancelled`)
            toolCalls.push({ toolCallId, toolName: ASK_USER, outcome: "cancelled", durationMs: Math.max(0, now() - started) })
            return yield* Effect.fail(new TurnAborted())
          }
          // the sweeper may close it too: one command id, so the actor closes it once
          if (outcome.status === "timeout") yield* record(new CloseQuestion({ questionId, reason: "timeout" }), questionTimeoutCommandId(questionId))
          context.openQuestions.delete(questionId)
          emit(outcome.status === "answered" ? { type: "question-end", id: questionId, status: "answered" } : { type: "question-end", id: questionId, status: "closed", reason: "timeout" })
          toolCalls.push({ toolCallId, toolName: ASK_USER, outcome: "completed", durationMs: Math.max(0, now() - started) })
          if (outcome.status !== "answered") return { timedOut: true, options }
          // the answer reaches the log sealed under the person's key (docs/audit.md); erased meanwhile, it is ""
          const open = yield* personalOpener([outcome.answer])
          return { answer: open.text(outcome.answer) ?? "" }
        }).pipe(Effect.ensuring(Effect.sync(() => waiting.cancel())))
      })

    // the SDK calls a tool's `execute` and awaits the Promise it returns: the one way back into the node's runtime;
    // it rejects with the failure itself, so the turn's loop recognises TurnFailed and TurnAborted in `tool-error`
    const runExit = Runtime.runPromiseExit(runtime)
    const execute = async <A>(effect: Effect.Effect<A, unknown, any>): Promise<A> => {
      const exit = await runExit(effect)
      if (Exit.isSuccess(exit)) return exit.value
      throw Option.getOrElse(Cause.failureOption(exit.cause), () => Cause.squash(exit.cause))
    }

    const calls: TurnToolCalls = {
      execute: (tool, input, toolCallId) =>
        execute(tool === ASK_USER ? askUser(input as { question: string; options?: ReadonlyArray<string> }, toolCallId) : callTool(tool, input, toolCallId))
    }
    /** A refused call of a tool not offered, kept by the call's id for the turn's record of it. */
    const refusals = new Map<string, FailureDescription>()
    /**
     * The SDK's repair hook sees a call of a tool the turn did not offer before it fails: a refusal
     * is told to the model as the tool's error text, the one error body (its `error` part carries
     * only that text), and kept for `refusalOf`.
     */
    const repairToolCall = async ({ toolCall, error }: { readonly toolCall: { readonly toolCallId: string; readonly toolName: string }; readonly error: unknown }) => {
      if (!NoSuchToolError.isInstance(error)) return null
      const refusal = await unofferedRefusal(toolCall.toolName)
      if (refusal === undefined) return null
      refusals.set(toolCall.toolCallId, refusal)
      throw new Error(JSON.stringify(errorBody(refusal)))
    }
    return { calls, repairToolCall, refusalOf: (toolCallId: string) => refusals.get(toolCallId) }
  })

/** A tool call's errorReason: the failure's reason in the one error table, else its code. */
export const reasonOf = (described: Pick<FailureDescription, "code" | "reason">): string => described.reason ?? described.code
