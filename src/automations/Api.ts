/**
 * The automations wing's contracts (spec 2.8, 3.4, 4.4): automations and their runs on the API
 * (`/v1/{org}/{ws}/automation/...`), MCP and the agent.
 */
import { Schema } from "effect"
import { ApiTrigger, EventTrigger, Step, Trigger } from "../../actors/automation/definition.ts"
import { ApprovalReceipt } from "../../actors/conversation/events.ts"
import { Json } from "../../actors/kernel.ts"
import { defineContract, type Role } from "../checkpoint/Capability.ts"
import { AsOf } from "../platform/AsOf.ts"
import { PageLimit } from "../platform/Paging.ts"

// spec 5 rule 3: an organization key reads no runs, so no `org:member` here
const readers: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member", "workspace:viewer"]
const writers: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member"]
/** Who reads a webhook signing secret after its creation: no key holds these roles (spec 5 rule 4). */
export const secretKeepers: ReadonlyArray<Role> = ["org:owner", "workspace:admin"]

const common = { scope: "workspace", surfaces: ["api", "mcp", "agent"], claimedBy: "builtin", destructive: false, needsApproval: false } as const
const reads = { ...common, roles: readers, mutating: false, sensitivity: "low" } as const
const writes = { ...common, roles: writers, mutating: true, changesAccess: false, sensitivity: "medium" } as const

const Name = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
const Description = Schema.String.pipe(Schema.maxLength(2000))
export const AutomationId = Schema.String.pipe(Schema.pattern(/^aut_[0-9a-f]{32}$/, { message: () => "must be an automation id (aut_...)" }))
const RunId = Schema.String.pipe(Schema.pattern(/^arn_[0-9a-f]{32}$/, { message: () => "must be a run id (arn_...)" }))

/** A schedule as callers give it: the zone defaults to `UTC`. */
const ScheduleInput = Schema.Struct({
  type: Schema.Literal("schedule"),
  cronExpression: Schema.NonEmptyString,
  timezone: Schema.optional(Schema.NonEmptyString)
})
export const TriggerInput = Schema.Union(EventTrigger, ScheduleInput, ApiTrigger)
export type TriggerInput = typeof TriggerInput.Type

export const Run = Schema.Struct({
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
export type Run = typeof Run.Type

/** An automation's latest run, as its list shows it. */
export const LastRun = Schema.Struct({ runId: Schema.String, status: Run.fields.status, createdAt: Schema.String, endedAt: Schema.NullOr(Schema.String) })

export const Automation = Schema.Struct({
  automationId: Schema.String,
  name: Schema.String,
  description: Schema.String,
  trigger: Trigger,
  steps: Schema.Array(Step),
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
export type Automation = typeof Automation.Type

/** An automation as its list shows it: with its latest run. */
export const ListedAutomation = Schema.Struct({ ...Automation.fields, lastRun: Schema.NullOr(LastRun) })
export type ListedAutomation = typeof ListedAutomation.Type

const AutomationRef = Schema.Struct({ automationId: AutomationId })

export const createAutomation = defineContract({
  ...writes,
  name: "automation.create",
  description:
    "Create an automation: a playbook of steps (agent, tool, condition, webhook, prompt, human_input) and its trigger (event, schedule or api). Created by an AI it is disabled until a person enables it.",
  input: Schema.Struct({
    name: Name,
    description: Schema.optional(Description),
    trigger: TriggerInput,
    steps: Schema.optional(Schema.Array(Step)),
    enabled: Schema.optional(Schema.Boolean)
  }),
  output: Schema.Struct({ ...Automation.fields, webhookSecret: Schema.String })
})

export const updateAutomation = defineContract({
  ...writes,
  name: "automation.update",
  description:
    "Rename or re-describe an automation, replace its trigger, or replace its steps; what is omitted stays. A new trigger or new steps from an AI (a key, MCP, the agent) disable an enabled automation until a person enables it again.",
  input: Schema.Struct({
    automationId: AutomationId,
    name: Schema.optional(Name),
    description: Schema.optional(Description),
    trigger: Schema.optional(TriggerInput),
    steps: Schema.optional(Schema.Array(Step))
  }),
  output: Automation
})

export const enableAutomation = defineContract({
  ...writes,
  name: "automation.enable",
  description:
    "Enable an automation: its trigger goes live, and its runs act with the enabling person's rights. Only a person acting directly may enable one (spec 3.4).",
  input: AutomationRef,
  output: Automation
})

export const disableAutomation = defineContract({
  ...writes,
  name: "automation.disable",
  description: "Disable an automation: no run starts once this is answered, on any node.",
  input: AutomationRef,
  output: Automation
})

export const deleteAutomation = defineContract({
  ...writes,
  name: "automation.delete",
  description: "Delete an automation; its runs' history stays.",
  destructive: true,
  needsApproval: true,
  input: AutomationRef,
  output: Schema.Struct({ automationId: Schema.String, deleted: Schema.Literal(true) })
})

export const triggerAutomation = defineContract({
  ...writes,
  name: "automation.trigger",
  description: "Fire an automation with an api trigger, with an optional JSON payload; answers with the run started.",
  // a playbook acts in the world: the agent fires one only as its person approves
  needsApproval: true,
  input: Schema.Struct({ automationId: AutomationId, payload: Schema.optional(Json) }),
  output: Schema.Struct({ runId: Schema.String, status: Schema.Literal("running", "succeeded", "skipped") })
})

export const getAutomation = defineContract({
  ...reads,
  name: "automation.get",
  description:
    "Read an automation: its trigger, steps, enablement and recent runs (status, trigger, step timeline, errors); with asOf, as they stood at that moment.",
  input: Schema.Struct({ ...AutomationRef.fields, asOf: Schema.optional(AsOf) }),
  output: Schema.Struct({
    ...Automation.fields,
    /** The receivers' secret: shown to Owners and Admins only (its creator saw it at creation). */
    webhookSecret: Schema.optional(Schema.String),
    recentRuns: Schema.Array(Run)
  })
})

export const listAutomations = defineContract({
  ...reads,
  name: "automation.list",
  description: "List the workspace's automations in pages ordered by id, each with its latest run, optionally only enabled or disabled ones.",
  input: Schema.Struct({ enabled: Schema.optional(Schema.Boolean), limit: Schema.optional(PageLimit), cursor: Schema.optional(Schema.String) }),
  output: Schema.Struct({
    automations: Schema.Array(ListedAutomation),
    nextCursor: Schema.NullOr(Schema.String)
  })
})

export const getRun = defineContract({
  ...reads,
  name: "automation.get_run",
  description: "Read one run of an automation: status, trigger, every step attempt with its output or error.",
  input: Schema.Struct({ runId: RunId }),
  output: Schema.Struct({ ...Run.fields, automationId: Schema.String })
})

export const respondToRun = defineContract({
  ...writes,
  name: "automation.respond",
  description: "Answer the human_input step a run waits for; the run goes on with the answer as the step's output.",
  // a person of the workspace answers, never a key or an agent on their behalf
  requiresPerson: true,
  surfaces: ["api", "mcp"],
  input: Schema.Struct({ runId: RunId, response: Json }),
  output: Schema.Struct({ runId: Schema.String, status: Schema.Literal("running", "waiting", "succeeded", "failed") })
})

export const resolveRunApproval = defineContract({
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
  // the decision's signed receipt, as a turn's approval answers it (docs/audit.md)
  output: Schema.Struct({ runId: Schema.String, status: Schema.Literal("running", "waiting", "succeeded", "failed"), receipt: ApprovalReceipt })
})
