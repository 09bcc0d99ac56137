/**
 * Automations as the API states them (spec 2.8; `automation.*` and `schema.get`), and the drafts
 * the editor holds while a person types: inputs hold text, so a draft keeps text and becomes an
 * automation's trigger and steps only when saved. The server has the final word on every rule;
 * the editor checks only what it must to build a request (JSON that does not parse, a number that
 * is not one).
 */

export type Operator =
  | "eq"
  | "neq"
  | "gt"
  | "gte"
  | "lt"
  | "lte"
  | "contains"
  | "in"
  | "not_in"
  | "before"
  | "after"
  | "changed"
  | "exists"
  | "not_exists"

/** Spec 2.8's operators in words, in its order: a `condition` step's paths have no registry type, so any applies. */
export const OPERATOR_WORDS: Readonly<Record<Operator, string>> = {
  eq: "equals",
  neq: "does not equal",
  gt: "is greater than",
  gte: "is at least",
  lt: "is less than",
  lte: "is at most",
  contains: "contains",
  in: "is one of",
  not_in: "is none of",
  before: "is before",
  after: "is after",
  changed: "changed",
  exists: "is set",
  not_exists: "is not set"
}
const ALL_OPERATORS = Object.keys(OPERATOR_WORDS) as ReadonlyArray<Operator>

/** `exists`, `not_exists` and `changed` compare with nothing; `in` and `not_in` with a list. */
const takesNoValue = (operator: Operator) => operator === "exists" || operator === "not_exists" || operator === "changed"
export const takesList = (operator: Operator) => operator === "in" || operator === "not_in"

export type PropertyType = "string" | "number" | "boolean" | "datetime" | "enum"

interface PropertyDefinition {
  readonly type: PropertyType
  readonly values?: ReadonlyArray<string>
  readonly required: boolean
}

/** A label of the workspace's schema registry, with the operators each property admits. */
export interface Label {
  readonly label: string
  readonly properties: Readonly<Record<string, PropertyDefinition>>
  readonly operators: Readonly<Record<string, ReadonlyArray<Operator>>>
}

type Scalar = string | number | boolean
type ConditionValue = null | Scalar | ReadonlyArray<Scalar>

export interface Condition {
  readonly kind: "condition"
  readonly id: string
  readonly property: string
  readonly operator: Operator
  readonly value?: ConditionValue
}

export interface ConditionGroup {
  readonly kind: "group"
  readonly id: string
  readonly combinator: "and" | "or"
  readonly children: ReadonlyArray<ConditionNode>
}

export type ConditionNode = Condition | ConditionGroup

export type NodeEventType = "node.created" | "node.updated" | "node.deleted"
export const EVENT_WORDS: Readonly<Record<NodeEventType, string>> = {
  "node.created": "created",
  "node.updated": "updated",
  "node.deleted": "deleted"
}

export type Trigger =
  | { readonly type: "event"; readonly entityType: string; readonly eventType: NodeEventType; readonly conditions?: ConditionNode }
  | { readonly type: "schedule"; readonly cronExpression: string; readonly timezone: string }
  | { readonly type: "api" }

export type StepType = "agent" | "tool" | "condition" | "webhook" | "prompt" | "human_input"
export const STEP_WORDS: Readonly<Record<StepType, string>> = {
  agent: "Agent",
  tool: "Tool",
  condition: "Condition",
  webhook: "Webhook",
  prompt: "Prompt",
  human_input: "Human input"
}
export const STEP_TYPES = Object.keys(STEP_WORDS) as ReadonlyArray<StepType>

export interface Step {
  readonly name: string
  readonly stepType: StepType
  readonly config: Readonly<Record<string, unknown>>
}

export type RunStatus = "running" | "waiting" | "succeeded" | "failed" | "skipped"

export interface Automation {
  readonly automationId: string
  readonly name: string
  readonly description: string
  readonly trigger: Trigger
  readonly steps: ReadonlyArray<Step>
  readonly enabled: boolean
  /** `ai`: created from chat, MCP or a key; it waits for a person's Enable (spec 3.4). */
  readonly origin: "human" | "ai"
  readonly createdAt: string
  readonly updatedAt: string
  readonly version: number
}

export interface ListedAutomation extends Automation {
  readonly lastRun: { readonly runId: string; readonly status: RunStatus; readonly createdAt: string; readonly endedAt: string | null } | null
}

/** One attempt at one step of a run. */
export interface StepRecord {
  readonly index: number
  readonly name: string
  readonly stepType: StepType
  readonly status: "running" | "waiting" | "succeeded" | "failed"
  readonly attempt: number
  readonly startedAt: string
  readonly endedAt: string | null
  readonly output: unknown
  readonly error: { readonly code: string; readonly message: string } | null
  readonly input: { readonly prompt: string; readonly assignee: string; readonly expiresAt: string } | null
  /** A call parked for the approval of the person the run acts for (only on such an attempt). */
  readonly approval?: {
    readonly capability: string
    readonly input: unknown
    readonly approver: string
    readonly expiresAt: string
    readonly decision: "approved" | "denied" | null
  }
}

export type RunTrigger =
  | { readonly type: "event"; readonly eventType: NodeEventType; readonly nodeId: string; readonly label: string; readonly at: string }
  | { readonly type: "schedule"; readonly tick: string }
  | { readonly type: "api"; readonly at: string; readonly payload: unknown }

export interface Run {
  readonly runId: string
  readonly status: RunStatus
  readonly trigger: RunTrigger
  readonly steps: ReadonlyArray<StepRecord>
  readonly error: { readonly code: string; readonly message: string; readonly step?: string } | null
  readonly createdAt: string
  readonly startedAt: string | null
  readonly endedAt: string | null
}

export interface AutomationDetail extends Automation {
  readonly webhookSecret?: string
  readonly recentRuns: ReadonlyArray<Run>
}

export const isActive = (status: RunStatus) => status === "running" || status === "waiting"

/** What fires an automation, in a few words. */
export const triggerSummary = (trigger: Trigger): string => {
  switch (trigger.type) {
    case "event": {
      const count = trigger.conditions === undefined ? 0 : countConditions(trigger.conditions)
      const when = `When a ${trigger.entityType} is ${EVENT_WORDS[trigger.eventType]}`
      return count === 0 ? when : `${when}, if ${count} condition${count === 1 ? "" : "s"} hold`
    }
    case "schedule":
      return `On schedule ${trigger.cronExpression} (${trigger.timezone})`
    case "api":
      return "When fired over the API"
  }
}

const countConditions = (node: ConditionNode): number =>
  node.kind === "condition" ? 1 : node.children.reduce((sum, child) => sum + countConditions(child), 0)

/** How long from `from` to `to` (or to now), in words. */
export const duration = (from: string | null, to: string | null): string => {
  if (from === null) return "—"
  const ms = (to === null ? Date.now() : Date.parse(to)) - Date.parse(from)
  if (ms < 1000) return `${Math.max(0, ms)} ms`
  const seconds = ms / 1000
  if (seconds < 60) return `${seconds.toFixed(1)} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

// ---------------------------------------------------------------------------------------------
// Condition drafts

/** A condition as its inputs hold it: `text` for one value (a list: one per line), `picked` for an enum's list. */
export interface ConditionDraft {
  readonly kind: "condition"
  readonly id: string
  readonly property: string
  readonly operator: Operator
  readonly text: string
  readonly picked: ReadonlyArray<string>
}

export interface GroupDraft {
  readonly kind: "group"
  readonly id: string
  readonly combinator: "and" | "or"
  readonly children: ReadonlyArray<NodeDraft>
}

export type NodeDraft = ConditionDraft | GroupDraft

/** What a condition's value is read as: a property's registry type, or (a `condition` step's path) none. */
export type ValueKind = PropertyType | undefined

/** The next free id with this prefix in the tree: `c1`, `c2`, ... and `g1`, ... */
export const nextId = (tree: NodeDraft | null, prefix: "c" | "g"): string => {
  let max = 0
  const visit = (node: NodeDraft) => {
    const match = new RegExp(`^${prefix}(\\d+)$`).exec(node.id)
    if (match !== null) max = Math.max(max, Number(match[1]))
    if (node.kind === "group") node.children.forEach(visit)
  }
  if (tree !== null) visit(tree)
  return `${prefix}${max + 1}`
}

export const emptyGroup = (id = "g1"): GroupDraft => ({ kind: "group", id, combinator: "and", children: [] })

export const newCondition = (id: string, property: string, operator: Operator): ConditionDraft => ({
  kind: "condition",
  id,
  property,
  operator,
  text: "",
  picked: []
})

/** The tree with the node `id` replaced by what `change` makes of it (undefined removes it). */
export const changeNode = (tree: GroupDraft, id: string, change: (node: NodeDraft) => NodeDraft | undefined): GroupDraft => {
  const walk = (node: NodeDraft): NodeDraft | undefined => {
    if (node.id === id) return change(node)
    if (node.kind === "condition") return node
    return { ...node, children: node.children.flatMap((child) => walk(child) ?? []) }
  }
  return (walk(tree) as GroupDraft | undefined) ?? emptyGroup(tree.id)
}

const pad = (n: number) => String(n).padStart(2, "0")

/** An instant as a `datetime-local` input shows it: the person's own time. */
const toLocalInput = (iso: string): string => {
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return ""
  const base = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
  return d.getSeconds() === 0 ? base : `${base}:${pad(d.getSeconds())}`
}

/** A value typed where no registry says its type: numbers, true and false as such, quoted text as text. */
const looseScalar = (text: string): Scalar => {
  const trimmed = text.trim()
  try {
    const parsed: unknown = JSON.parse(trimmed)
    if (typeof parsed === "number" || typeof parsed === "boolean" || typeof parsed === "string") return parsed
  } catch {
    // plain text
  }
  return text
}

const looseText = (value: Scalar): string => {
  if (typeof value !== "string") return String(value)
  return looseScalar(value) === value ? value : JSON.stringify(value)
}

/** The input kind a value takes: by the property's type, or (a step's path) by the operator. */
export const inputKind = (operator: Operator, kind: ValueKind): "none" | "list" | "enum" | "enum-list" | "number" | "boolean" | "datetime" | "text" => {
  if (takesNoValue(operator)) return "none"
  if (kind === "enum") return takesList(operator) ? "enum-list" : "enum"
  if (takesList(operator)) return "list"
  if (kind === undefined) {
    if (operator === "gt" || operator === "gte" || operator === "lt" || operator === "lte") return "number"
    if (operator === "before" || operator === "after") return "datetime"
    return "text"
  }
  return kind === "string" ? "text" : kind
}

const conditionDraftOf = (node: Condition, kind: ValueKind): ConditionDraft => {
  const draft = newCondition(node.id, node.property, node.operator)
  const value = node.value
  if (value === undefined || value === null) return draft
  const input = inputKind(node.operator, kind)
  if (Array.isArray(value)) {
    return input === "enum-list" ? { ...draft, picked: value.map(String) } : { ...draft, text: value.map((v) => (kind === undefined ? looseText(v) : String(v))).join("\n") }
  }
  const scalar = value as Scalar
  if (input === "datetime" && typeof scalar === "string") return { ...draft, text: toLocalInput(scalar) }
  return { ...draft, text: kind === undefined && input === "text" ? looseText(scalar) : String(scalar) }
}

export const treeDraftOf = (tree: ConditionNode | undefined, kindOf: (property: string) => ValueKind): GroupDraft => {
  const walk = (node: ConditionNode): NodeDraft =>
    node.kind === "condition" ? conditionDraftOf(node, kindOf(node.property)) : { ...node, children: node.children.map(walk) }
  if (tree === undefined) return emptyGroup()
  // a tree whose root is one condition is shown inside a group, which means the same
  return tree.kind === "group" ? (walk(tree) as GroupDraft) : { ...emptyGroup(nextId(null, "g")), children: [walk(tree)] }
}

/** A failure to build a request from a draft, said in words. */
export class DraftProblem extends Error {}

const oneValue = (text: string, input: ReturnType<typeof inputKind>, where: string): Scalar => {
  switch (input) {
    case "number": {
      const n = Number(text.trim())
      if (text.trim() === "" || !Number.isFinite(n)) throw new DraftProblem(`${where}: '${text}' is not a number`)
      return n
    }
    case "boolean":
      if (text !== "true" && text !== "false") throw new DraftProblem(`${where}: choose true or false`)
      return text === "true"
    case "datetime": {
      const at = new Date(text)
      if (text === "" || Number.isNaN(at.getTime())) throw new DraftProblem(`${where}: choose a date and time`)
      return at.toISOString()
    }
    case "enum":
      if (text === "") throw new DraftProblem(`${where}: choose a value`)
      return text
    default:
      return text
  }
}

const conditionOf = (draft: ConditionDraft, kind: ValueKind): Condition => {
  const where = `Condition ${draft.id}`
  if (draft.property.trim() === "") throw new DraftProblem(`${where}: choose a property`)
  const base = { kind: "condition" as const, id: draft.id, property: draft.property.trim(), operator: draft.operator }
  const input = inputKind(draft.operator, kind)
  switch (input) {
    case "none":
      return base
    case "enum-list":
      return { ...base, value: draft.picked }
    case "list": {
      const lines = draft.text.split("\n").filter((line) => line.trim() !== "")
      const element = kind === undefined ? "loose" : inputKind("eq", kind)
      return { ...base, value: lines.map((line) => (element === "loose" ? looseScalar(line) : oneValue(line.trim(), element, where))) }
    }
    case "text":
      return { ...base, value: kind === undefined ? looseScalar(draft.text) : draft.text }
    default:
      return { ...base, value: oneValue(draft.text, input, where) }
  }
}

/** The tree to save, or undefined for a root group with nothing in it. */
export const treeOf = (root: GroupDraft, kindOf: (property: string) => ValueKind): ConditionGroup | undefined => {
  const walk = (node: NodeDraft): ConditionNode =>
    node.kind === "condition" ? conditionOf(node, kindOf(node.property)) : { kind: "group", id: node.id, combinator: node.combinator, children: node.children.map(walk) }
  return root.children.length === 0 ? undefined : (walk(root) as ConditionGroup)
}

/** The operators a property admits: the registry's list for a label's property, any for a step's path. */
export const operatorsOf = (label: Label | undefined, property: string): ReadonlyArray<Operator> =>
  label === undefined ? ALL_OPERATORS : (Object.hasOwn(label.operators, property) ? label.operators[property] : [])

export const kindIn = (label: Label | undefined) => (property: string): ValueKind =>
  label !== undefined && Object.hasOwn(label.properties, property) ? label.properties[property].type : undefined
