/**
 * The editor's draft of a whole automation: its name, trigger (each trigger type's part kept, so
 * switching back and forth loses nothing) and steps, as text fields; `toRequest` turns it into the
 * body of `automation.create` or `automation.update`.
 */
import {
  type Automation,
  DraftProblem,
  emptyGroup,
  type GroupDraft,
  kindIn,
  type Label,
  type NodeEventType,
  type Step,
  type StepType,
  type Trigger,
  treeDraftOf,
  treeOf
} from "./model.ts"

interface HeaderDraft {
  readonly key: number
  readonly name: string
  readonly value: string
}

/** A step as its inputs hold it; `config` keeps what the form does not show (timeouts, retries, a tier) as it was. */
export interface StepDraft {
  readonly key: number
  readonly name: string
  readonly stepType: StepType
  readonly config: Readonly<Record<string, unknown>>
  /** Text fields by config key (`input` and `body` as JSON text, `timeoutHours` for human input). */
  readonly fields: Readonly<Record<string, string>>
  readonly headers: ReadonlyArray<HeaderDraft>
  /** A `condition` step's tree (its properties are dotted paths into `trigger` and `steps`). */
  readonly conditions: GroupDraft
}

export interface Draft {
  readonly name: string
  readonly description: string
  readonly triggerType: Trigger["type"]
  readonly entityType: string
  readonly eventType: NodeEventType
  readonly conditions: GroupDraft
  readonly cronExpression: string
  readonly timezone: string
  readonly steps: ReadonlyArray<StepDraft>
}

/** The config keys each step type's form edits; the rest of a config is kept as it was. */
const MANAGED: Readonly<Record<StepType, ReadonlyArray<string>>> = {
  agent: ["agentSlug", "prompt"],
  tool: ["capability", "input"],
  condition: ["conditions", "else"],
  webhook: ["url", "method", "headers", "body"],
  prompt: ["prompt"],
  human_input: ["prompt", "assignee", "timeoutSeconds"]
}

let keys = 0
/** A key that stays with a step or header row while it moves (for React and for focus). */
export const newKey = () => ++keys

const json = (value: unknown) => (value === undefined ? "" : JSON.stringify(value, null, 2))
const text = (value: unknown) => (typeof value === "string" ? value : "")

export const newStep = (stepType: StepType, name: string): StepDraft => ({
  key: newKey(),
  name,
  stepType,
  config: {},
  fields: stepType === "webhook" ? { method: "POST" } : {},
  headers: [],
  conditions: emptyGroup()
})

const stepDraftOf = (step: Step): StepDraft => {
  const c = step.config
  const fields: Record<string, string> = {}
  for (const key of ["agentSlug", "prompt", "capability", "else", "url", "method", "assignee"]) fields[key] = text(c[key])
  if (step.stepType === "tool") fields.input = json(c.input)
  if (step.stepType === "webhook") {
    fields.body = json(c.body)
    fields.method = text(c.method) || "POST"
  }
  if (step.stepType === "human_input" && typeof c.timeoutSeconds === "number") fields.timeoutHours = String(c.timeoutSeconds / 3600)
  const headers = Object.entries((c.headers ?? {}) as Record<string, string>).map(([name, value]) => ({ key: newKey(), name, value }))
  const conditions = step.stepType === "condition" ? treeDraftOf(c.conditions as never, () => undefined) : emptyGroup()
  return { key: newKey(), name: step.name, stepType: step.stepType, config: c, fields, headers, conditions }
}

export const emptyDraft = (): Draft => ({
  name: "",
  description: "",
  triggerType: "event",
  entityType: "",
  eventType: "node.created",
  conditions: emptyGroup(),
  cronExpression: "0 9 * * 1-5",
  timezone: "UTC",
  steps: []
})

export const draftOf = (automation: Automation, labels: ReadonlyArray<Label>): Draft => {
  const { trigger } = automation
  const base = { ...emptyDraft(), name: automation.name, description: automation.description, triggerType: trigger.type, steps: automation.steps.map(stepDraftOf) }
  switch (trigger.type) {
    case "event": {
      const label = labels.find((l) => l.label === trigger.entityType)
      return { ...base, entityType: trigger.entityType, eventType: trigger.eventType, conditions: treeDraftOf(trigger.conditions, kindIn(label)) }
    }
    case "schedule":
      return { ...base, cronExpression: trigger.cronExpression, timezone: trigger.timezone }
    case "api":
      return base
  }
}

const parseJson = (source: string, where: string): unknown => {
  try {
    return JSON.parse(source)
  } catch (error) {
    throw new DraftProblem(`${where} is not JSON: ${(error as Error).message}`)
  }
}

const stepOf = (draft: StepDraft): Step => {
  const f = draft.fields
  const where = `Step '${draft.name}'`
  const config: Record<string, unknown> = Object.fromEntries(Object.entries(draft.config).filter(([key]) => !MANAGED[draft.stepType].includes(key)))
  const set = (key: string, value: unknown) => {
    if (value !== undefined && value !== "") config[key] = value
  }
  switch (draft.stepType) {
    case "agent":
      set("agentSlug", f.agentSlug)
      set("prompt", f.prompt)
      break
    case "tool": {
      set("capability", f.capability?.trim())
      if ((f.input ?? "").trim() !== "") {
        const input = parseJson(f.input, `${where}: its input`)
        if (input === null || typeof input !== "object" || Array.isArray(input)) throw new DraftProblem(`${where}: its input must be a JSON object`)
        config.input = input
      }
      break
    }
    case "condition":
      config.conditions = treeOf(draft.conditions, () => undefined) ?? { kind: "group", id: draft.conditions.id, combinator: draft.conditions.combinator, children: [] }
      set("else", f.else)
      break
    case "webhook": {
      set("url", f.url?.trim())
      set("method", f.method)
      const headers = draft.headers.filter((h) => h.name.trim() !== "")
      if (headers.length > 0) config.headers = Object.fromEntries(headers.map((h) => [h.name.trim(), h.value]))
      if ((f.body ?? "").trim() !== "") config.body = parseJson(f.body, `${where}: its body`)
      break
    }
    case "prompt":
      set("prompt", f.prompt)
      break
    case "human_input": {
      set("prompt", f.prompt)
      set("assignee", f.assignee?.trim())
      const hours = (f.timeoutHours ?? "").trim()
      if (hours !== "") {
        const n = Number(hours)
        if (!Number.isFinite(n) || n <= 0) throw new DraftProblem(`${where}: the time to answer must be a positive number of hours`)
        config.timeoutSeconds = Math.max(1, Math.round(n * 3600))
      }
      break
    }
  }
  return { name: draft.name.trim(), stepType: draft.stepType, config }
}

/** The trigger and steps to send; throws DraftProblem for what cannot be sent at all. */
export const toRequest = (draft: Draft, labels: ReadonlyArray<Label>) => {
  let trigger: Trigger
  switch (draft.triggerType) {
    case "event": {
      if (draft.entityType === "") throw new DraftProblem("Choose the entity type (label) the automation watches")
      const label = labels.find((l) => l.label === draft.entityType)
      const conditions = treeOf(draft.conditions, kindIn(label))
      trigger = { type: "event", entityType: draft.entityType, eventType: draft.eventType, ...(conditions === undefined ? {} : { conditions }) }
      break
    }
    case "schedule":
      trigger = { type: "schedule", cronExpression: draft.cronExpression.trim(), timezone: draft.timezone }
      break
    case "api":
      trigger = { type: "api" }
      break
  }
  return { name: draft.name.trim(), description: draft.description, trigger, steps: draft.steps.map(stepOf) }
}
