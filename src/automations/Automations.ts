/**
 * Automations (spec 2.8, 3.4, 4.4) as capabilities on the API (`/v1/{org}/{ws}/automation/...`),
 * MCP and the agent: changes are commands to the automation's actor, which applies the enable gate;
 * reads are its projections and its runs' (Queries.ts). Their contracts are in Api.ts.
 */
import { Effect } from "effect"
import { AutomationActor } from "../../actors/automation/actor.ts"
import { validateConditions } from "../../actors/automation/conditions.ts"
import type { Origin, Step, Trigger } from "../../actors/automation/definition.ts"
import {
  CreateAutomation,
  DeleteAutomation,
  DisableAutomation,
  EnableAutomation,
  UpdateAutomation
} from "../../actors/automation/protocol.ts"
import { type AutomationState, enablerOf } from "../../actors/automation/state.ts"
import { AutomationRunActor } from "../../actors/automationrun/actor.ts"
import { RunNotWaiting } from "../../actors/automationrun/errors.ts"
import { ProvideInput, ResolveStepApproval } from "../../actors/automationrun/protocol.ts"
import { currentAttempt, stepApprovalId } from "../../actors/automationrun/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { stateAsOf } from "../../streams/AsOf.ts"
import { runIdOf, startRun } from "./Runs.ts"
import { checkSchedule, ScheduleLimitReached } from "./Schedule.ts"
import { checkSteps } from "./Playbooks.ts"
import { webhookSecretOf } from "./Steps.ts"
import { accessFacts } from "../identity/Auth.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { momentOf, readAsOf } from "../platform/AsOf.ts"
import { NotFound } from "../platform/Errors.ts"
import { FairShares } from "../platform/FairShares.ts"
import { findAgent } from "../assistant/WorkspaceAgents.ts"
import { definitionOf } from "../nodes/Nodes.ts"
import { personOf } from "../checkpoint/Person.ts"
import { idCursor, keysetPage } from "../platform/Paging.ts"
import * as Api from "./Api.ts"
import { inputSha256, signReceipt } from "../audit/ApprovalReceipts.ts"
import type { Json } from "../../actors/kernel.ts"
import { personalOpener, personSealer, sealedNote } from "../audit/PersonalData.ts"
import { runView } from "./RunWords.ts"
import { automationsAfter, findAutomation, findRun, otherEnabledSchedules, recentRunIds, recentRuns, runOfState, runState } from "./Queries.ts"

/** A direct human origin (spec 3.4): a person's own sign-in on the API; the agent, MCP and keys are not. */
const originOf = (invocation: Invocation): Origin =>
  invocation.surface === "api" && (invocation.principal.credential === "session" || invocation.principal.credential === "cli_login") ? "human" : "ai"

const workspaceOf = (invocation: Invocation) => invocation.workspaceId!

/** The trigger as stored, once its label, conditions, cron and zone check out. */
const checkTrigger = (workspaceId: string, trigger: Api.TriggerInput) =>
  Effect.gen(function* () {
    switch (trigger.type) {
      case "event": {
        const definition = yield* definitionOf(workspaceId, trigger.entityType)
        if (trigger.conditions !== undefined) yield* validateConditions(trigger.conditions, trigger.entityType, definition)
        return trigger satisfies Trigger
      }
      case "schedule": {
        const timezone = trigger.timezone ?? "UTC"
        yield* checkSchedule(trigger.cronExpression, timezone)
        return { type: "schedule", cronExpression: trigger.cronExpression, timezone } satisfies Trigger
      }
      case "api":
        return trigger satisfies Trigger
    }
  })

/**
 * The workspace's enabled schedules stay within its fair share: one more going live (this
 * automation, enabled with a schedule trigger) is refused at the bound. Counted on the read model,
 * so two requests at once may both pass at the last free place (docs/decisions.md, "Fair shares").
 */
const checkScheduleShare = (workspaceId: string, automationId: string) =>
  Effect.gen(function* () {
    const limit = (yield* FairShares).limits.enabledSchedulesPerWorkspace
    const others = yield* otherEnabledSchedules(workspaceId, automationId)
    if (others >= limit) return yield* new ScheduleLimitReached({ limit })
  })

const checkPlaybook = (invocation: Invocation, steps: ReadonlyArray<Step>) =>
  checkSteps(steps, {
    agentExists: (slug) => Effect.map(findAgent(workspaceOf(invocation), slug), (agent) => agent !== undefined),
    personOfWorkspace: (userId) =>
      Effect.map(accessFacts(invocation.orgId!, workspaceOf(invocation), userId, null), ({ standing }) => standing.orgRole === "owner" || standing.workspaceRole !== null)
  })

const fromState = (state: AutomationState): Api.Automation => {
  if (state._tag !== "Live") throw new Error("an automation command succeeded without a live automation")
  const { automationId, name, description, trigger, steps, enabled, origin, createdAt, updatedAt, version, revision } = state
  return { automationId, name, description, trigger, steps, enabled, origin, createdAt, updatedAt, version, revision, enabledBy: enablerOf(state) }
}

const notFound = (automationId: string) =>
  new NotFound({ reason: "automation_not_found", message: `no automation ${automationId} in this workspace` })

const readAutomation = (workspaceId: string, automationId: string) =>
  Effect.flatMap(findAutomation(workspaceId, automationId), (automation) =>
    automation === undefined ? Effect.fail(notFound(automationId)) : Effect.succeed(automation)
  )

/** Runs shown on an automation's detail, newest first. */
const RECENT_RUNS = 20

const send = <C extends { readonly _tag: string }>(invocation: Invocation, automationId: string, command: C) =>
  Effect.flatMap(ActorHost, (host) => host.send(AutomationActor, automationId, command as never, invocation.meta))


export const createAutomation = implement(Api.createAutomation, (invocation, input) =>
  Effect.gen(function* () {
    const workspaceId = workspaceOf(invocation)
    const trigger = yield* checkTrigger(workspaceId, input.trigger)
    const steps = input.steps ?? []
    yield* checkPlaybook(invocation, steps)
    const automationId = invocation.newId("aut")
    if (trigger.type === "schedule" && input.enabled === true) yield* checkScheduleShare(workspaceId, automationId)
    const { principal } = invocation
    const { state } = yield* send(
      invocation,
      automationId,
      new CreateAutomation({
        automationId,
        workspaceId,
        orgId: invocation.orgId!,
        name: input.name,
        description: input.description ?? "",
        trigger,
        steps,
        enabled: input.enabled,
        origin: originOf(invocation),
        runAs: { userId: principal.attributedTo, apiKeyId: principal.apiKeyId }
      })
    )
    return { ...fromState(state), webhookSecret: yield* webhookSecretOf(automationId) }
  })
)

export const updateAutomation = implement(Api.updateAutomation, (invocation, input) =>
  Effect.gen(function* () {
    const workspaceId = workspaceOf(invocation)
    const trigger = input.trigger === undefined ? undefined : yield* checkTrigger(workspaceId, input.trigger)
    if (input.steps !== undefined) yield* checkPlaybook(invocation, input.steps)
    const { automationId, name, description, steps } = input
    if (trigger?.type === "schedule") {
      const current = yield* readAutomation(workspaceId, automationId)
      if (current.enabled && current.trigger.type !== "schedule") yield* checkScheduleShare(workspaceId, automationId)
    }
    const { state } = yield* send(
      invocation,
      automationId,
      new UpdateAutomation({ automationId, workspaceId, name, description, trigger, steps, origin: originOf(invocation), by: invocation.principal.attributedTo })
    )
    return fromState(state)
  })
)

export const enableAutomation = implement(Api.enableAutomation, (invocation, { automationId }) =>
  Effect.gen(function* () {
    const workspaceId = workspaceOf(invocation)
    const current = yield* readAutomation(workspaceId, automationId)
    if (!current.enabled && current.trigger.type === "schedule") yield* checkScheduleShare(workspaceId, automationId)
    const { state } = yield* send(
      invocation,
      automationId,
      new EnableAutomation({ automationId, workspaceId, origin: originOf(invocation), by: invocation.principal.attributedTo })
    )
    return fromState(state)
  })
)

export const disableAutomation = implement(Api.disableAutomation, (invocation, { automationId }) =>
  Effect.map(send(invocation, automationId, new DisableAutomation({ automationId, workspaceId: workspaceOf(invocation) })), ({ state }) => fromState(state))
)

export const deleteAutomation = implement(Api.deleteAutomation, (invocation, { automationId }) =>
  Effect.as(send(invocation, automationId, new DeleteAutomation({ automationId, workspaceId: workspaceOf(invocation) })), {
    automationId,
    deleted: true as const
  })
)

export const triggerAutomation = implement(Api.triggerAutomation, (invocation, input) =>
  Effect.gen(function* () {
    const automation = { automationId: input.automationId, workspaceId: workspaceOf(invocation) }
    // the invocation's first id: the same run again when the call is retried with its idempotency key
    const runId = runIdOf(input.automationId, `api:${invocation.newId("fire")}`)
    const { commandId: _, ...meta } = invocation.meta
    return yield* startRun(automation, runId, { type: "api", at: invocation.at, payload: input.payload ?? null }, meta)
  })
)

/**
 * The automation as it stood at `asOf`, with its recent runs then: the latest runs created by then
 * (at a log position: the latest runs), each folded as of the moment, those not begun by then left out.
 */
const automationAsOf = (invocation: Invocation, automationId: string, asOf: string) =>
  Effect.gen(function* () {
    const workspaceId = workspaceOf(invocation)
    const { state } = yield* readAsOf(AutomationActor, automationId, `automation ${automationId}`, asOf, invocation.at, (s) => s._tag !== "Absent" && s.workspaceId === workspaceId, () => notFound(automationId))
    if (state._tag !== "Live") return yield* Effect.fail(notFound(automationId))
    const until = yield* momentOf(asOf)
    const ids = yield* recentRunIds(automationId, until._tag === "time" ? new Date(until.at) : undefined, RECENT_RUNS)
    const runs = yield* Effect.forEach(ids, (runId) => stateAsOf(AutomationRunActor, runId, until, Date.parse(invocation.at), (run) => run._tag === "Run" && run.workspaceId === workspaceId))
    return { automation: fromState(state), runs: runs.flatMap((run) => (run._tag === "Folded" && run.state._tag === "Run" ? [runOfState(run.state)] : [])) }
  })

export const getAutomation = implement(Api.getAutomation, (invocation, { automationId, asOf }) =>
  Effect.gen(function* () {
    const { automation, runs } = asOf === undefined
      ? { automation: yield* readAutomation(workspaceOf(invocation), automationId), runs: yield* recentRuns(automationId, RECENT_RUNS) }
      : yield* automationAsOf(invocation, automationId, asOf)
    const keeper = invocation.roles.some((role) => Api.secretKeepers.includes(role))
    return { ...automation, ...(keeper ? { webhookSecret: yield* webhookSecretOf(automationId) } : {}), recentRuns: yield* Effect.forEach(runs, runView) }
  })
)

/** An opaque position: the base64url of the last automation id of the previous page. */
const Cursor = idCursor(Api.AutomationId)

export const listAutomations = implement(Api.listAutomations, (invocation, input) =>
  Effect.gen(function* () {
    const read = (after: string | undefined, rows: number) => automationsAfter(workspaceOf(invocation), input.enabled, after, rows)
    const { page, nextCursor } = yield* keysetPage(Cursor, input, read, (last) => last.automationId)
    return { automations: page, nextCursor }
  })
)

export const getRun = implement(Api.getRun, (invocation, { runId }) =>
  Effect.gen(function* () {
    const run = yield* findRun(workspaceOf(invocation), runId)
    if (run === undefined) return yield* new NotFound({ reason: "run_not_found", message: `no run ${runId} in this workspace` })
    return yield* runView(run)
  })
)

export const respondToRun = implement(Api.respondToRun, (invocation, { runId, response }) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const respondent = invocation.principal.attributedTo
    // the answer is the respondent's words: sealed under their key (docs/audit.md)
    const sealed = (yield* personSealer(respondent)).sealJson(response)
    const { state } = yield* host.send(AutomationRunActor, runId, new ProvideInput({ runId, workspaceId: workspaceOf(invocation), response: sealed, respondent }), invocation.meta)
    return { runId, status: state._tag === "Run" ? state.status : "running" }
  })
)

export const resolveRunApproval = implement(Api.resolveRunApproval, (invocation, { runId, decision, note }) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const userId = yield* personOf(invocation)
    const workspaceId = workspaceOf(invocation)
    // the call the run waits on, as its actor last stored it: what the receipt is signed over (the
    // decider refuses a receipt that does not describe the waiting call, so a stale read is refused, never recorded)
    const run = yield* runState(runId)
    const waiting = run?._tag === "Run" && run.workspaceId === workspaceId && run.cursor !== null ? currentAttempt(run, run.cursor) : undefined
    if (run?._tag !== "Run" || waiting?.approval === undefined || waiting.status !== "waiting") return yield* new RunNotWaiting({ runId })
    // signed here, where the key is, as a turn's approval is (src/assistant/Assistant.ts)
    const receipt = yield* signReceipt({
      approvalId: stepApprovalId(runId, waiting.index, waiting.attempt),
      orgId: run.orgId,
      workspaceId,
      capability: waiting.approval.capability,
      // over the input as the person approves it, opened (it is sealed in the run: docs/audit.md)
      inputSha256: inputSha256((yield* personalOpener([waiting.approval.input])).json(waiting.approval.input) as Json),
      askedBy: waiting.approval.approver,
      decidedBy: userId,
      decision,
      decidedAt: invocation.meta.at
    })
    // the note, which the denial's failure quotes, sealed (docs/audit.md)
    const command = new ResolveStepApproval({ runId, workspaceId, decision, note: yield* sealedNote(userId, note), userId, receipt })
    const { state } = yield* host.send(AutomationRunActor, runId, command, invocation.meta)
    return { runId, status: state._tag === "Run" ? state.status : "running", receipt }
  })
)

export const automationCapabilities: ReadonlyArray<AnyCapability> = [
  createAutomation,
  listAutomations,
  getAutomation,
  updateAutomation,
  enableAutomation,
  disableAutomation,
  deleteAutomation,
  triggerAutomation,
  getRun,
  respondToRun,
  resolveRunApproval
]
