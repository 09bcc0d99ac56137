/**
 * The assistant's routes (spec 4.1) as capabilities. `ask_assistant` is the turn: its handler makes
 * every check of 7.1 and hands back a prepared turn, which the gateway runs as an SSE stream or as
 * one JSON answer. The others act on a turn's approvals, questions, reply and stop; only the person
 * who asked the turn (for a key, its creator) may answer or stop it.
 */
import { packsOf } from "../packs/Entitlement.ts"
import { Effect, Exit, Fiber, FiberRef, Option } from "effect"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import { FinishRun, ResolveApproval } from "../../actors/conversation/protocol.ts"
import type { Json } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { slugsOf } from "../identity/Auth.ts"
import { type AnyCapability, Capabilities, implement, type Invocation, type InvokeRequest } from "../checkpoint/Capability.ts"
import { invoke } from "../checkpoint/Checkpoint.ts"
import { admitTurn, awaitRunPlace, NodeAdmission, type TurnPlace } from "../platform/Admission.ts"
import { Forbidden, NotFound, RateLimited } from "../platform/Errors.ts"
import { FailureDescriber } from "../platform/Failures.ts"
import { checkAssistantSpend } from "../billing/TurnCharges.ts"
import { inputSha256, signReceipt } from "../audit/ApprovalReceipts.ts"
import { personSealer, sealedNote } from "../audit/PersonalData.ts"
import { findApproval, findQuestion, findRun, findRunningTurn, skillRows } from "./Queries.ts"
import { checkAttachments } from "./Files.ts"
import { resolveTurnModel } from "./models/resolve.ts"
import { KeyRateLimiter } from "./KeyRateLimit.ts"
import { ChatRateLimiter } from "./RateLimit.ts"
import { AssistantSettings } from "./Settings.ts"
import type { StartedTurn, TurnOutcome } from "./ChatEvents.ts"
import { agentToolsFor, ASK_USER, ASK_USER_DESCRIPTION, askUserSchema } from "./Tools.ts"
import type { PreparedTurn } from "./PreparedTurn.ts"
import { startTurn } from "./Turn.ts"
import { findAgent } from "./WorkspaceAgents.ts"
import { AgentNotFound } from "../../actors/agent/errors.ts"
import * as TurnControl from "./TurnControl.ts"
import { ownRecord, personOf } from "../checkpoint/Person.ts"
import * as Api from "./Api.ts"
import { findTurnToResume, foundOnceCaughtUp, resumeTurn } from "./TurnFollow.ts"

// what other wings and the gateway import from here

/** Fields the ask route refuses (spec 4.1: the model override fields). */
export const MODEL_OVERRIDE_FIELDS = ["tier", "model", "effort"] as const

/** The slugs of the invocation's organization and workspace, for a call it makes through the checkpoint. */
export const pathOf = (invocation: Invocation) =>
  Effect.map(slugsOf(invocation.orgId!, invocation.workspaceId), (slugs) => {
    const [orgSlug, workspaceSlug] = slugs.split("/")
    return { orgSlug, workspaceSlug }
  })

/**
 * The workspace agent an in-process caller (an automation's `agent` step, through `askAgent`) runs
 * `ask_assistant` as, set around its `invoke`: the chat request (spec 2.2) has no field for it.
 */
export const CurrentAgentSlug = FiberRef.unsafeMake<string | undefined>(undefined)

export const askAssistant = implement(Api.askAssistant, (invocation, input) =>
  FiberRef.get(CurrentAgentSlug).pipe(
    Effect.flatMap((agentSlug) => prepareTurn(invocation, input, null, agentSlug)),
    Effect.flatMap(startTurn)
  )
)

/** A started turn's outcome, once it ends. */
export const outcomeOf = (turn: StartedTurn) =>
  Effect.async<TurnOutcome>((resume) => turn.listen({ event: () => {}, done: (outcome) => resume(Effect.succeed(outcome)) }))

/** The ask route's turn (spec 4.1 `assistant/ask`): `ask_assistant` through the checkpoint, then its outcome once it ends. */
export const askAndAwait = <E>(request: InvokeRequest<E>) => Effect.flatMap(invoke(request), (started) => outcomeOf(started as StartedTurn))

/** What a turn is asked with: the chat request's fields (A2A messages fill the first ones). */
export type TurnRequest = Pick<typeof Api.ChatRequest.Type, "content" | "conversationId" | "turnId" | "attachments" | "goal" | "tier" | "model" | "effort" | "pageContext">

/**
 * The rate a turn is counted against: an API key's own budget, a minute's turns across the cluster
 * (src/assistant/KeyRateLimit.ts), whatever the surface (A2A, chat stream, ask); a person's (a
 * session, a CLI login, an automation run as them) the workspace's chat requests a minute on this
 * node (docs/decisions.md, "Issue 24: a machine caller's own limit").
 */
const takeTurnRate = (invocation: Invocation) =>
  Effect.gen(function* () {
    const { credential, apiKeyId } = invocation.principal
    const nowMs = Date.parse(invocation.at)
    if (credential === "api_key" && apiKeyId !== null) return yield* (yield* KeyRateLimiter).take(apiKeyId, nowMs)
    const taken = (yield* ChatRateLimiter).take(invocation.workspaceId!, nowMs)
    if (!taken.ok) return yield* new RateLimited({ retryAfterSeconds: taken.retryAfterSeconds })
  })

/**
 * Every check of spec 7.1 a turn passes before it may start, in one place for the chat routes and
 * A2A: the kill switch, room in the node, a person behind the caller, the rate (the key's, or the workspace's), the model, the spend
 * limits, the attachments. `newConversationPublicId` names the conversation a first turn creates.
 * `agentSlug` names the workspace agent the turn runs as (404 `agent_not_found` when there is none):
 * its instructions join the system prompt, its tier applies when the request names no tier, and
 * only its tools (of those the caller's role allows) are offered.
 */
/** An agent's attached skills as its turn carries them: current versions, in the order attached; a deleted one is left out. */
const attachedSkillsOf = (workspaceId: string, slugs: ReadonlyArray<string>) =>
  slugs.length === 0
    ? Effect.succeed([])
    : Effect.map(skillRows(workspaceId, slugs), (rows) =>
        slugs.flatMap((slug) => rows.filter((row) => row.slug === slug).map(({ name, version, instructions }) => ({ slug, name, version, instructions })))
      )

export const prepareTurn = (invocation: Invocation, input: TurnRequest, newConversationPublicId: string | null = null, agentSlug?: string) =>
  Effect.gen(function* () {
    const settings = yield* AssistantSettings
    if (settings.killSwitch) return yield* new Forbidden({ reason: "kill_switch", message: "the operator has stopped the assistant" })
    // the turn's place in the node, before its reads and its workspace's rate: a full node refuses
    // at once, and the turns being prepared count (a check that took nothing would let a burst
    // through to the reads, to be refused only once it had cost them)
    const place = yield* admitTurn
    return yield* checkTurn(invocation, input, newConversationPublicId, agentSlug, place).pipe(Effect.onError(() => Effect.sync(place.ended)))
  })

const checkTurn = (invocation: Invocation, input: TurnRequest, newConversationPublicId: string | null, agentSlug: string | undefined, place: TurnPlace) =>
  Effect.gen(function* () {
    const userId = yield* personOf(invocation)
    const orgId = invocation.orgId!
    const workspaceId = invocation.workspaceId!
    const agent = agentSlug === undefined ? undefined : yield* findAgent(workspaceId, agentSlug)
    if (agentSlug !== undefined && agent === undefined) return yield* new AgentNotFound({ slug: agentSlug })
    yield* takeTurnRate(invocation)
    const model = yield* resolveTurnModel({ orgId, tier: input.tier ?? agent?.tier ?? undefined, model: input.model, effort: input.effort })
    yield* checkAssistantSpend({ orgId, workspaceId, paidBy: model.paidBy, now: new Date(invocation.at) })
    const attachments = input.attachments ?? []
    yield* checkAttachments(workspaceId, attachments)
    const registry = yield* Capabilities
    const allowed = agentToolsFor(registry, invocation, yield* packsOf(invocation.orgId))
    const agentTools = agent?.tools ?? null
    const prepared: PreparedTurn = {
      invocation,
      path: yield* pathOf(invocation),
      userId,
      conversationRef: input.conversationId ?? null,
      newConversationPublicId,
      content: input.content,
      attachments,
      goal: input.goal === undefined ? null : { statement: input.goal.statement, maxRounds: input.goal.maxRounds ?? 3 },
      turnId: input.turnId ?? null,
      runId: invocation.newId("tse"),
      model,
      tools: agentTools === null ? allowed : allowed.filter((tool) => agentTools.includes(tool.capability.name)),
      registry,
      agent: agent === undefined || agent.builtIn ? null : { name: agent.name, instructions: agent.instructions, skills: yield* attachedSkillsOf(workspaceId, agent.skills) },
      pageContext: pageContextOf(input.pageContext),
      place
    }
    return prepared
  })

/** How much of a page's context a turn shows the model: enough to name a page and what is on it. */
const PAGE_CONTEXT_CHARS = 2_000

/**
 * The page's context as JSON, cut at PAGE_CONTEXT_CHARS, with `<` escaped so that nothing in it can
 * close the tag the prompt wraps it in; null when there is none.
 */
const pageContextOf = (pageContext: Readonly<Record<string, unknown>> | undefined): string | null => {
  if (pageContext === undefined || Object.keys(pageContext).length === 0) return null
  const json = JSON.stringify(pageContext).replaceAll("<", "\\u003c")
  return json.length <= PAGE_CONTEXT_CHARS ? json : `${json.slice(0, PAGE_CONTEXT_CHARS)}… (cut)`
}

/** A run that is not the caller's person's, or none: 404 `run_not_found` alike. */
export const runNotFound = (runId: string) => new NotFound({ reason: "run_not_found", message: `no run ${runId} of yours in this workspace` })

/**
 * An approved call run as its person, through the checkpoint like any agent call, and its run
 * ended with what became of it (spec 2.4's `execution`). What the call answered is the person's,
 * as its input was: sealed under their key (docs/audit.md).
 */
const runApprovedCall = (
  invocation: Invocation,
  approval: { readonly conversationId: string; readonly capability: string; readonly input: unknown; readonly userId: string },
  runId: string
) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const exit = yield* invoke({
      authorization: undefined,
      principal: invocation.principal,
      surface: "agent",
      capability: approval.capability,
      path: yield* pathOf(invocation),
      input: Effect.succeed(approval.input)
    }).pipe(Effect.exit)
    const described = Exit.isFailure(exit) ? (yield* FailureDescriber)(exit.cause) : undefined
    const reason = described === undefined ? undefined : described.reason ?? described.code
    const execution: typeof Api.Execution.Type = reason === undefined ? { status: "succeeded", runId } : { status: "failed", runId, reason }
    yield* host.send(
      ConversationActor,
      approval.conversationId,
      new FinishRun({
        runId,
        status: reason === undefined ? "finished" : "failed",
        assistantMessageId: null,
        reply: "",
        result: { execution: { ...execution }, ...(Exit.isSuccess(exit) ? { output: (yield* personSealer(approval.userId)).sealJson(exit.value as Json) } : {}) },
        usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        error: described === undefined ? null : { code: described.code, reason: described.reason ?? null, message: described.message }
      }),
      { ...invocation.meta, commandId: `${invocation.meta.commandId}:finish` }
    )
    return execution
  })

export const resolveApproval = implement(Api.resolveApproval, (invocation, input) =>
  Effect.gen(function* () {
    const userId = yield* personOf(invocation)
    const approval = yield* findApproval(invocation.workspaceId!, input.approvalId)
    if (approval === undefined) return yield* new NotFound({ reason: "approval_not_found", message: `no approval ${input.approvalId} in this workspace` })
    const host = yield* ActorHost
    const executionRunId = input.decision === "approved" ? invocation.newId("tse") : null
    // signed here, where the key is; the decider records it only if it describes the decision (its time is the command's)
    const receipt = yield* signReceipt({
      approvalId: approval.publicId,
      orgId: invocation.orgId!,
      workspaceId: invocation.workspaceId!,
      capability: approval.capability,
      inputSha256: inputSha256(approval.input),
      askedBy: approval.userId,
      decidedBy: userId,
      decision: input.decision,
      decidedAt: invocation.meta.at
    })
    yield* host.send(
      ConversationActor,
      approval.conversationId,
      new ResolveApproval({ approvalId: approval.approvalId, decision: input.decision, note: yield* sealedNote(userId, input.note), userId, executionRunId, receipt, model: "none", node: host.nodeId }),
      invocation.meta
    )
    if (executionRunId === null) return { execution: { status: "denied" as const }, receipt }
    // the approval is recorded: the call is never refused for load. Its run takes a place among the
    // node's running turns, waiting for one if none is free, and goes on whether or not the caller
    // still waits (a caller gone away does not cut an approved call)
    const { runPlaces } = yield* NodeAdmission
    const placeNow = runPlaces.tryAcquire()
    let running = placeNow !== undefined
    const place = placeNow === undefined ? Effect.tap(awaitRunPlace, () => Effect.sync(() => (running = true))) : Effect.succeed(placeNow)
    const call = yield* place.pipe(
      Effect.flatMap((release) => runApprovedCall(invocation, approval, executionRunId).pipe(Effect.ensuring(Effect.sync(release)))),
      // no caller may be waiting by then: the log is where a run left unended is told (the sweep ends it)
      Effect.tapErrorCause((cause) => Effect.logError(`approval: the run ${executionRunId} of an approved call was not ended`, cause)),
      Effect.forkDaemon
    )
    const waitMs = (yield* AssistantSettings).approvalAnswerWaitMs
    const ended = waitMs === 0 ? Option.none() : yield* Fiber.join(call).pipe(Effect.timeoutOption(waitMs))
    const execution: typeof Api.Execution.Type = Option.getOrElse(ended, () => ({ status: running ? "dispatched" : "queued", runId: executionRunId }))
    return { execution, receipt }
  })
)

export const answerQuestion = implement(Api.answerQuestion, (invocation, input) =>
  Effect.gen(function* () {
    const userId = yield* personOf(invocation)
    const question = yield* findQuestion(invocation.workspaceId!, input.questionId)
    if (question === undefined) return { found: false }
    return { found: yield* TurnControl.answerQuestion(question.conversationId, input.questionId, userId, input.answer, invocation.meta) }
  })
)

export const turnReply = implement(Api.turnReply, (invocation, input) =>
  Effect.gen(function* () {
    const run = yield* ownRecord(invocation, findRun(invocation.workspaceId!, input.runId), () => runNotFound(input.runId))
    const ended = run.status === "finished" || run.status === "stopped"
    return ended ? { runStatus: run.status, reply: { text: run.reply ?? "" } } : { runStatus: run.status }
  })
)

export const cancelTurn = implement(Api.cancelTurn, (invocation, input) =>
  Effect.gen(function* () {
    const userId = yield* personOf(invocation)
    // a turn started on another node, or just now, may not be in this node's read models yet
    const running = yield* foundOnceCaughtUp(findRunningTurn(invocation.workspaceId!, input.turnId, userId))
    if (running === undefined) return { found: false }
    return { found: yield* TurnControl.stopTurn(running.conversationId, input.turnId, userId, invocation.meta) }
  })
)

/** The caller's turn followed for its resumed stream; null when the caller has no such turn (another person's included). */
export const streamTurn = implement(Api.streamTurn, (invocation, input) =>
  Effect.gen(function* () {
    const userId = yield* personOf(invocation)
    const run = yield* findTurnToResume(invocation.workspaceId!, userId, input.turnId)
    if (run === undefined) return null
    return yield* resumeTurn(invocation, run, input.lastEventId ?? 0)
  })
)

export const listAgentTools = implement(Api.listAgentTools, (invocation) =>
  Effect.gen(function* () {
    const registry = yield* Capabilities
    const tools = agentToolsFor(registry, invocation, yield* packsOf(invocation.orgId)).map((tool) => ({
      name: tool.toolName,
      capability: tool.capability.name,
      description: tool.capability.description,
      inputSchema: tool.inputSchema,
      needsApproval: tool.capability.needsApproval,
      riskLevel: tool.riskLevel
    }))
    return {
      tools: [
        ...tools,
        { name: ASK_USER, capability: null, description: ASK_USER_DESCRIPTION, inputSchema: askUserSchema, needsApproval: false, riskLevel: "low" as const }
      ]
    }
  })
)

export const assistantCapabilities: ReadonlyArray<AnyCapability> = [askAssistant, resolveApproval, answerQuestion, turnReply, cancelTurn, streamTurn, listAgentTools]
