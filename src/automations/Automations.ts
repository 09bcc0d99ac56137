/**
 * Automations (spec 2.8, 3.4, 4.4) as capabilities on the API (`/v1/{org}/{ws}/automation/...`),
 * MCP and the agent: changes are commands to the automation's actor, which applies the enable gate;
 * reads are its projections and its runs'.
 */
import { Effect, Schema } from "effect"
import { AutomationActor } from "../../actors/automation/actor.ts"
import { validateConditions } from "../../actors/automation/conditions.ts"
import { ApiTrigger, EventTrigger, type Origin, type Step, Step as StepSchema, Trigger } from "../../actors/automation/definition.ts"
import {
  CreateAutomation,
  DeleteAutomation,
  DisableAutomation,
  EnableAutomation,
  UpdateAutomation
} from "../../actors/automation/protocol.ts"
import { type AutomationState, enablerOf } from "../../actors/automation/state.ts"
import { AutomationRunActor } from "../../actors/automationrun/actor.ts"
import { ProvideInput, ResolveStepApproval } from "../../actors/automationrun/protocol.ts"
import { Json } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { Db, query } from "../../streams/Db.ts"
import { runIdOf, startRun } from "./Runs.ts"
import { checkSchedule, ScheduleLimitReached } from "./Schedule.ts"
import { checkSteps } from "./Playbooks.ts"
import { webhookSecretOf } from "./Steps.ts"
import { accessFacts } from "../identity/Auth.ts"
import { type AnyCapability, defineCapability, type Invocation, type Role } from "../checkpoint/Capability.ts"
import { NotFound } from "../platform/Errors.ts"
import { FairShares } from "../platform/FairShares.ts"
import { findAgent } from "../assistant/Agents.ts"
import { definitionOf } from "../nodes/Nodes.ts"
import { personOf } from "../checkpoint/Person.ts"
import { idCursor, keysetPage, PageLimit } from "../platform/Paging.ts"

// spec 5 rule 3: an organization key reads no runs, so no `org:member` here
const readers: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member", "workspace:viewer"]
const writers: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member"]
/** Who reads a webhook signing secret after its creation: no key holds these roles (spec 5 rule 4). */
const secretKeepers: ReadonlyArray<Role> = ["org:owner", "workspace:admin"]

const common = { scope: "workspace", surfaces: ["api", "mcp", "agent"], claimedBy: "builtin", destructive: false, needsApproval: false } as const
const reads = { ...common, roles: readers, mutating: false, sensitivity: "low" } as const
const writes = { ...common, roles: writers, mutating: true, changesAccess: false, sensitivity: "medium" } as const

const Name = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
const Description = Schema.String.pipe(Schema.maxLength(2000))
const AutomationId = Schema.String.pipe(Schema.pattern(/^aut_[0-9a-f]{32}$/, { message: () => "must be an automation id (aut_...)" }))
const RunId = Schema.String.pipe(Schema.pattern(/^arn_[0-9a-f]{32}$/, { message: () => "must be a run id (arn_...)" }))

/** A schedule as callers give it: the zone defaults to `UTC`. */
const ScheduleInput = Schema.Struct({
  type: Schema.Literal("schedule"),
  cronExpression: Schema.NonEmptyString,
  timezone: Schema.optional(Schema.NonEmptyString)
})
const TriggerInput = Schema.Union(EventTrigger, ScheduleInput, ApiTrigger)
type TriggerInput = typeof TriggerInput.Type

const Run = Schema.Struct({
  runId: Schema.String,
  status: Schema.Literal("running", "waiting", "succeeded", "failed", "skipped"),
  /** What fired it: the originating node event, the schedule tick, or the API call and its payload. */
  trigger: Json,
  /** Every attempt at every step: status, times, output, error. */
  steps: Json,
  error: Json,
  createdAt: Schema.String,
  startedAt: Schema.NullOr(Schema.String),
  endedAt: Schema.NullOr(Schema.String)
})

/** An automation's latest run, as its list shows it. */
const LastRun = Schema.Struct({ runId: Schema.String, status: Run.fields.status, createdAt: Schema.String, endedAt: Schema.NullOr(Schema.String) })

const Automation = Schema.Struct({
  automationId: Schema.String,
  name: Schema.String,
  description: Schema.String,
  trigger: Trigger,
  steps: Schema.Array(StepSchema),
  enabled: Schema.Boolean,
  /** Where its trigger and steps came from, at creation or their latest change: `human` or `ai` (spec 3.4). */
  origin: Schema.Literal("human", "ai"),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  version: Schema.Int,
  /** 1 on creation, +1 per change of the trigger or steps. */
  revision: Schema.Int,
  /** The person who enabled the current revision: its runs act with their rights. Null while disabled. */
  enabledBy: Schema.NullOr(Schema.String)
})
type Automation = typeof Automation.Type

/** A direct human origin (spec 3.4): a person's own sign-in on the API; the agent, MCP and keys are not. */
const originOf = (invocation: Invocation): Origin =>
  invocation.surface === "api" && (invocation.principal.credential === "session" || invocation.principal.credential === "cli_login") ? "human" : "ai"

const workspaceOf = (invocation: Invocation) => invocation.workspaceId!

/** The trigger as stored, once its label, conditions, cron and zone check out. */
const checkTrigger = (workspaceId: string, trigger: TriggerInput) =>
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
    const db = yield* Db
    const [{ others }] = yield* query("enabled schedules", () => db.sql`
      select count(*)::int as others from ${db.table("automations")}
      where workspace_id = ${workspaceId} and trigger_type = 'schedule' and enabled and automation_id <> ${automationId}`)
    if (others >= limit) return yield* new ScheduleLimitReached({ limit })
  })

const checkPlaybook = (invocation: Invocation, steps: ReadonlyArray<Step>) =>
  checkSteps(steps, {
    agentExists: (slug) => Effect.map(findAgent(workspaceOf(invocation), slug), (agent) => agent !== undefined),
    personOfWorkspace: (userId) =>
      Effect.map(accessFacts(invocation.orgId!, workspaceOf(invocation), userId, null), ({ standing }) => standing.orgRole === "owner" || standing.workspaceRole !== null)
  })

const fromState = (state: AutomationState): Automation => {
  if (state._tag !== "Live") throw new Error("an automation command succeeded without a live automation")
  const { automationId, name, description, trigger, steps, enabled, origin, createdAt, updatedAt, version, revision } = state
  return { automationId, name, description, trigger, steps, enabled, origin, createdAt, updatedAt, version, revision, enabledBy: enablerOf(state) }
}

const iso = (value: Date | string | null) => (value === null ? null : value instanceof Date ? value.toISOString() : value)

const toAutomation = (row: Record<string, any>): Automation => ({
  automationId: row.automation_id,
  name: row.name,
  description: row.description,
  trigger: row.trigger,
  steps: row.steps,
  enabled: row.enabled,
  origin: row.origin,
  createdAt: iso(row.created_at)!,
  updatedAt: iso(row.updated_at)!,
  version: row.version,
  revision: row.revision,
  enabledBy: row.enabled_by
})

const toRun = (row: Record<string, any>): typeof Run.Type => ({
  runId: row.run_id,
  status: row.status,
  trigger: row.trigger,
  steps: row.steps,
  error: row.error,
  createdAt: iso(row.created_at)!,
  startedAt: iso(row.started_at),
  endedAt: iso(row.ended_at)
})

const notFound = (automationId: string) =>
  new NotFound({ reason: "automation_not_found", message: `no automation ${automationId} in this workspace` })

const readAutomation = (workspaceId: string, automationId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("read automation", () => db.sql`
      select * from ${db.table("automations")} where workspace_id = ${workspaceId} and automation_id = ${automationId}`)
    return row === undefined ? yield* notFound(automationId) : toAutomation(row)
  })

/** Runs shown on an automation's detail, newest first. */
const RECENT_RUNS = 20

const send = <C extends { readonly _tag: string }>(invocation: Invocation, automationId: string, command: C) =>
  Effect.flatMap(ActorHost, (host) => host.send(AutomationActor, automationId, command as never, invocation.meta))

const AutomationRef = Schema.Struct({ automationId: AutomationId })

export const createAutomation = defineCapability({
  ...writes,
  name: "automation.create",
  description:
    "Create an automation: a playbook of steps (agent, tool, condition, webhook, prompt, human_input) and its trigger (event, schedule or api). Created by an AI it is disabled until a person enables it.",
  input: Schema.Struct({
    name: Name,
    description: Schema.optional(Description),
    trigger: TriggerInput,
    steps: Schema.optional(Schema.Array(StepSchema)),
    enabled: Schema.optional(Schema.Boolean)
  }),
  output: Schema.Struct({ ...Automation.fields, webhookSecret: Schema.String }),
  handler: (invocation, input) =>
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
})

export const updateAutomation = defineCapability({
  ...writes,
  name: "automation.update",
  description:
    "Rename or re-describe an automation, replace its trigger, or replace its steps; what is omitted stays. A new trigger or new steps from an AI (a key, MCP, the agent) disable an enabled automation until a person enables it again.",
  input: Schema.Struct({
    automationId: AutomationId,
    name: Schema.optional(Name),
    description: Schema.optional(Description),
    trigger: Schema.optional(TriggerInput),
    steps: Schema.optional(Schema.Array(StepSchema))
  }),
  output: Automation,
  handler: (invocation, input) =>
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
})

export const enableAutomation = defineCapability({
  ...writes,
  name: "automation.enable",
  description:
    "Enable an automation: its trigger goes live, and its runs act with the enabling person's rights. Only a person acting directly may enable one (spec 3.4).",
  input: AutomationRef,
  output: Automation,
  handler: (invocation, { automationId }) =>
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
})

export const disableAutomation = defineCapability({
  ...writes,
  name: "automation.disable",
  description: "Disable an automation: no run starts once this is answered, on any node.",
  input: AutomationRef,
  output: Automation,
  handler: (invocation, { automationId }) =>
    Effect.map(send(invocation, automationId, new DisableAutomation({ automationId, workspaceId: workspaceOf(invocation) })), ({ state }) => fromState(state))
})

export const deleteAutomation = defineCapability({
  ...writes,
  name: "automation.delete",
  description: "Delete an automation; its runs' history stays.",
  destructive: true,
  needsApproval: true,
  input: AutomationRef,
  output: Schema.Struct({ automationId: Schema.String, deleted: Schema.Literal(true) }),
  handler: (invocation, { automationId }) =>
    Effect.as(send(invocation, automationId, new DeleteAutomation({ automationId, workspaceId: workspaceOf(invocation) })), {
      automationId,
      deleted: true as const
    })
})

export const triggerAutomation = defineCapability({
  ...writes,
  name: "automation.trigger",
  description: "Fire an automation with an api trigger, with an optional JSON payload; answers with the run started.",
  // a playbook acts in the world: the agent fires one only as its person approves
  needsApproval: true,
  input: Schema.Struct({ automationId: AutomationId, payload: Schema.optional(Json) }),
  output: Schema.Struct({ runId: Schema.String, status: Schema.Literal("running", "succeeded", "skipped") }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const automation = { automationId: input.automationId, workspaceId: workspaceOf(invocation) }
      // the invocation's first id: the same run again when the call is retried with its idempotency key
      const runId = runIdOf(input.automationId, `api:${invocation.newId("fire")}`)
      const { commandId: _, ...meta } = invocation.meta
      return yield* startRun(automation, runId, { type: "api", at: invocation.at, payload: input.payload ?? null }, meta)
    })
})

export const getAutomation = defineCapability({
  ...reads,
  name: "automation.get",
  description: "Read an automation: its trigger, steps, enablement and recent runs (status, trigger, step timeline, errors).",
  input: AutomationRef,
  output: Schema.Struct({
    ...Automation.fields,
    /** The receivers' secret: shown to Owners and Admins only (its creator saw it at creation). */
    webhookSecret: Schema.optional(Schema.String),
    recentRuns: Schema.Array(Run)
  }),
  handler: (invocation, { automationId }) =>
    Effect.gen(function* () {
      const automation = yield* readAutomation(workspaceOf(invocation), automationId)
      const db = yield* Db
      const runs = yield* query("recent runs", () => db.sql`
        select * from ${db.table("automation_runs")} where automation_id = ${automationId}
        order by created_at desc, run_id desc limit ${RECENT_RUNS}`)
      const keeper = invocation.roles.some((role) => secretKeepers.includes(role))
      return { ...automation, ...(keeper ? { webhookSecret: yield* webhookSecretOf(automationId) } : {}), recentRuns: runs.map(toRun) }
    })
})

/** An opaque position: the base64url of the last automation id of the previous page. */
const Cursor = idCursor(AutomationId)

export const listAutomations = defineCapability({
  ...reads,
  name: "automation.list",
  description: "List the workspace's automations in pages ordered by id, each with its latest run, optionally only enabled or disabled ones.",
  input: Schema.Struct({ enabled: Schema.optional(Schema.Boolean), limit: Schema.optional(PageLimit), cursor: Schema.optional(Schema.String) }),
  output: Schema.Struct({
    automations: Schema.Array(Schema.Struct({ ...Automation.fields, lastRun: Schema.NullOr(LastRun) })),
    nextCursor: Schema.NullOr(Schema.String)
  }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const db = yield* Db
      const read = (after: string | undefined, rows: number) => query("list automations", () => db.sql`
        select a.*, r.run_id as last_run_id, r.status as last_run_status, r.created_at as last_run_created_at, r.ended_at as last_run_ended_at
        from ${db.table("automations")} a
        left join lateral (
          select run_id, status, created_at, ended_at from ${db.table("automation_runs")} r
          where r.automation_id = a.automation_id order by created_at desc, run_id desc limit 1
        ) r on true
        where a.workspace_id = ${workspaceOf(invocation)}
          ${input.enabled === undefined ? db.sql`` : db.sql`and a.enabled = ${input.enabled}`}
          ${after === undefined ? db.sql`` : db.sql`and a.automation_id > ${after}`}
        order by a.automation_id limit ${rows}`)
      const { page, nextCursor } = yield* keysetPage(Cursor, input, read, (last) => last.automation_id as string)
      const automations = page.map((row) => ({
        ...toAutomation(row),
        lastRun: row.last_run_id === null
          ? null
          : { runId: row.last_run_id, status: row.last_run_status, createdAt: iso(row.last_run_created_at)!, endedAt: iso(row.last_run_ended_at) }
      }))
      return { automations, nextCursor }
    })
})

export const getRun = defineCapability({
  ...reads,
  name: "automation.get_run",
  description: "Read one run of an automation: status, trigger, every step attempt with its output or error.",
  input: Schema.Struct({ runId: RunId }),
  output: Schema.Struct({ ...Run.fields, automationId: Schema.String }),
  handler: (invocation, { runId }) =>
    Effect.gen(function* () {
      const db = yield* Db
      const [row] = yield* query("read run", () => db.sql`
        select * from ${db.table("automation_runs")} where run_id = ${runId} and workspace_id = ${workspaceOf(invocation)}`)
      if (row === undefined) return yield* new NotFound({ reason: "run_not_found", message: `no run ${runId} in this workspace` })
      return { ...toRun(row), automationId: row.automation_id }
    })
})

export const respondToRun = defineCapability({
  ...writes,
  name: "automation.respond",
  description: "Answer the human_input step a run waits for; the run goes on with the answer as the step's output.",
  // a person of the workspace answers, never a key or an agent on their behalf
  requiresPerson: true,
  surfaces: ["api", "mcp"],
  input: Schema.Struct({ runId: RunId, response: Json }),
  output: Schema.Struct({ runId: Schema.String, status: Schema.Literal("running", "waiting", "succeeded", "failed") }),
  handler: (invocation, { runId, response }) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const respondent = invocation.principal.attributedTo
      const { state } = yield* host.send(AutomationRunActor, runId, new ProvideInput({ runId, workspaceId: workspaceOf(invocation), response, respondent }), invocation.meta)
      return { runId, status: state._tag === "Run" ? state.status : "running" }
    })
})

export const resolveRunApproval = defineCapability({
  ...writes,
  name: "automation.resolve_approval",
  description:
    "Approve or deny the call a run's tool step parked for approval (a capability that needs it, as in chat); only the person the run acts for (who enabled it) may. Approved, the run makes the call as them and goes on; denied, the step and the run fail with approval_denied.",
  // as enabling it: a person's own decision, never a key's or an agent's on their behalf
  requiresPerson: true,
  surfaces: ["api", "mcp"],
  input: Schema.Struct({
    runId: RunId,
    decision: Schema.Literal("approved", "denied"),
    note: Schema.optional(Schema.String.pipe(Schema.maxLength(2000)))
  }),
  output: respondToRun.output,
  handler: (invocation, { runId, decision, note }) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const userId = yield* personOf(invocation)
      const command = new ResolveStepApproval({ runId, workspaceId: workspaceOf(invocation), decision, note: note ?? null, userId })
      const { state } = yield* host.send(AutomationRunActor, runId, command, invocation.meta)
      return { runId, status: state._tag === "Run" ? state.status : "running" }
    })
})

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
