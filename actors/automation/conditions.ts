/**
 * Condition trees of automations (spec 2.8): their schema, their validation (against the watched
 * label's definition for event triggers, by shape for `condition` steps) and their evaluation. Pure:
 * the semantics are recorded in docs/decisions.md ("Automation conditions").
 */
import { Either, Schema, SchemaAST } from "effect"
import type { Json } from "../kernel.ts"
import type { NodeEvent, NodeUpdated } from "../node/events.ts"
import { type LabelDefinition, own, type Properties, type PropertyDefinition, PropertyType } from "../schema/definition.ts"
import { Operator, operatorsFor } from "../schema/operators.ts"
import { isDateTime } from "../schema/properties.ts"

/** A tree nests at most this many levels (the root is level 1). */
export const MAX_CONDITION_DEPTH = 8
/** A tree holds at most this many groups and conditions together. */
export const MAX_CONDITION_NODES = 100

const ConditionId = Schema.NonEmptyString.pipe(Schema.maxLength(128))

/**
 * What a condition compares with: a scalar, or a list of scalars for `in` / `not_in`. No operator
 * needs more, and a flat value cannot nest deeper than the tree's own limit allows.
 */
export const ConditionValue = Schema.Union(
  Schema.Null,
  Schema.Boolean,
  Schema.Number,
  Schema.String,
  Schema.Array(Schema.Union(Schema.Boolean, Schema.Number, Schema.String))
)
export type ConditionValue = typeof ConditionValue.Type

export const Condition = Schema.Struct({
  kind: Schema.Literal("condition"),
  id: ConditionId,
  /** A property of the watched label, or for a `condition` step a dotted path over `{ trigger, steps }`. */
  property: Schema.NonEmptyString.pipe(Schema.maxLength(256)),
  operator: Operator,
  /** Absent (or null) for `exists`, `not_exists` and `changed`. */
  value: Schema.optional(ConditionValue)
}).annotations({ identifier: "Condition" })
export type Condition = typeof Condition.Type

export const Combinator = Schema.Literal("and", "or")
export type Combinator = typeof Combinator.Type

export interface ConditionGroup {
  readonly kind: "group"
  readonly id: string
  readonly combinator: Combinator
  readonly children: ReadonlyArray<ConditionNode>
}

export type ConditionNode = Condition | ConditionGroup

interface ConditionGroupEncoded {
  readonly kind: "group"
  readonly id: string
  readonly combinator: Combinator
  readonly children: ReadonlyArray<ConditionNodeEncoded>
}

type ConditionNodeEncoded = typeof Condition.Encoded | ConditionGroupEncoded

export const ConditionGroup: Schema.Schema<ConditionGroup, ConditionGroupEncoded> = Schema.Struct({
  kind: Schema.Literal("group"),
  id: ConditionId,
  combinator: Combinator,
  children: Schema.Array(Schema.suspend((): Schema.Schema<ConditionNode, ConditionNodeEncoded> => ConditionNode))
}).annotations({ identifier: "ConditionGroup" })

/** The shape of a tree, without its size limits: decode input with `ConditionTree`. */
export const ConditionNode: Schema.Schema<ConditionNode, ConditionNodeEncoded> = Schema.Union(
  Condition,
  ConditionGroup
).annotations({ identifier: "ConditionNode" })

const isRecord = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Whether raw input stays within the limits, walked without recursion: the structural decode
 * recurses once per level and would exhaust the stack on a hostile tree a thousand levels deep.
 */
const withinLimits = (input: unknown): true | string => {
  const pending: Array<readonly [unknown, number]> = [[input, 1]]
  // counted as they are found, so a group of a million children is refused before any is queued
  let nodes = 1
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!
    if (depth > MAX_CONDITION_DEPTH) return `a condition tree nests at most ${MAX_CONDITION_DEPTH} levels`
    const children = isRecord(node) ? own(node, "children") : undefined
    if (!Array.isArray(children)) continue
    nodes += children.length
    if (nodes > MAX_CONDITION_NODES) return `a condition tree holds at most ${MAX_CONDITION_NODES} groups and conditions`
    for (const child of children) pending.push([child, depth + 1])
  }
  return true
}

/**
 * A condition tree as automations take it: its limits are checked on the raw input before its
 * shape is decoded. Tool schemas show it as `ConditionNode` (the surrogate).
 */
export const ConditionTree: Schema.Schema<ConditionNode, unknown> = Schema.Unknown.pipe(
  Schema.filter(withinLimits),
  Schema.compose(ConditionNode, { strict: false })
).annotations({ [SchemaAST.SurrogateAnnotationId]: ConditionNode.ast })

// ---------------------------------------------------------------------------------------------
// Validation errors: all HTTP 400 `bad_request`; the reason each maps to is named on its class.

/** Reason `unknown_property`: the watched label declares no such property. */
export class UnknownConditionProperty extends Schema.TaggedError<UnknownConditionProperty>()("UnknownConditionProperty", {
  conditionId: Schema.String,
  label: Schema.String,
  property: Schema.String
}) {
  override get message() {
    return `condition ${this.conditionId}: label ${this.label} declares no property ${this.property}`
  }
}

/** Reason `operator_not_allowed`: the operator does not apply to the property's data type. */
export class OperatorNotAllowed extends Schema.TaggedError<OperatorNotAllowed>()("OperatorNotAllowed", {
  conditionId: Schema.String,
  property: Schema.String,
  type: PropertyType,
  operator: Operator
}) {
  override get message() {
    return `condition ${this.conditionId}: operator ${this.operator} does not apply to ${this.property}, a ${this.type} property (allowed: ${operatorsFor(this.type).join(", ")})`
  }
}

/** Reason `invalid_enum_value`: the condition compares an enum property with a value it cannot hold. */
export class InvalidConditionEnumValue extends Schema.TaggedError<InvalidConditionEnumValue>()("InvalidConditionEnumValue", {
  conditionId: Schema.String,
  property: Schema.String,
  value: Schema.String,
  allowed: Schema.NonEmptyArray(Schema.String)
}) {
  override get message() {
    return `condition ${this.conditionId}: '${this.value}' is not a value of ${this.property} (allowed: ${this.allowed.join(", ")})`
  }
}

/** Reason `invalid_condition_value`: the value does not have the shape the operator needs. */
export class InvalidConditionValue extends Schema.TaggedError<InvalidConditionValue>()("InvalidConditionValue", {
  conditionId: Schema.String,
  property: Schema.String,
  operator: Operator,
  /** What the operator takes, in words. */
  expected: Schema.String
}) {
  override get message() {
    return `condition ${this.conditionId}: ${this.operator} on ${this.property} takes ${this.expected}`
  }
}

/** Reason `invalid_condition_path`: a `condition` step's property is not a dotted path into `trigger` or `steps`. */
export class InvalidConditionPath extends Schema.TaggedError<InvalidConditionPath>()("InvalidConditionPath", {
  conditionId: Schema.String,
  property: Schema.String
}) {
  override get message() {
    return `condition ${this.conditionId}: '${this.property}' is not a dotted path starting with trigger or steps (such as trigger.status or steps.review.approved)`
  }
}

/** Reason `duplicate_condition_id`: two groups or conditions of one tree share an id. */
export class DuplicateConditionId extends Schema.TaggedError<DuplicateConditionId>()("DuplicateConditionId", {
  conditionId: Schema.String
}) {
  override get message() {
    return `condition id ${this.conditionId} is used more than once in the tree`
  }
}

export const ConditionError = Schema.Union(
  UnknownConditionProperty,
  OperatorNotAllowed,
  InvalidConditionEnumValue,
  InvalidConditionValue,
  InvalidConditionPath,
  DuplicateConditionId
)
export type ConditionError = typeof ConditionError.Type

// ---------------------------------------------------------------------------------------------
// Validation

const unary: ReadonlyArray<Operator> = ["exists", "not_exists", "changed"]
const listed: ReadonlyArray<Operator> = ["in", "not_in"]
const ordered: ReadonlyArray<Operator> = ["gt", "gte", "lt", "lte"]
const temporal: ReadonlyArray<Operator> = ["before", "after"]

type Scalar = string | number | boolean

const isScalar = (value: unknown): value is Scalar =>
  typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))

/** Each tree node in document order (depth first), with the first id seen twice. */
const nodesOf = (tree: ConditionNode): { readonly conditions: ReadonlyArray<Condition>; readonly duplicate?: string } => {
  const conditions: Array<Condition> = []
  const seen = new Set<string>()
  let duplicate: string | undefined
  const visit = (node: ConditionNode): void => {
    if (duplicate === undefined && seen.has(node.id)) duplicate = node.id
    seen.add(node.id)
    if (node.kind === "group") node.children.forEach(visit)
    else conditions.push(node)
  }
  visit(tree)
  return duplicate === undefined ? { conditions } : { conditions, duplicate }
}

/** The first condition's error, in document order; a duplicate id first of all. */
const firstError = (
  tree: ConditionNode,
  check: (condition: Condition) => ConditionError | undefined
): Either.Either<void, ConditionError> => {
  const { conditions, duplicate } = nodesOf(tree)
  if (duplicate !== undefined) return Either.left(new DuplicateConditionId({ conditionId: duplicate }))
  for (const condition of conditions) {
    const error = check(condition)
    if (error !== undefined) return Either.left(error)
  }
  return Either.void
}

const typeWords: { readonly [T in PropertyType]: string } = {
  string: "a string",
  number: "a finite number",
  boolean: "true or false",
  datetime: "an ISO 8601 date or date-time with offset",
  enum: "one of the enum's values"
}

const fitsType = (declared: PropertyDefinition, value: unknown): boolean => {
  switch (declared.type) {
    case "string":
    case "enum":
      return typeof value === "string"
    case "number":
      return typeof value === "number" && Number.isFinite(value)
    case "boolean":
      return typeof value === "boolean"
    case "datetime":
      return typeof value === "string" && isDateTime(value)
  }
}

/** The operator is allowed for the property's type; does the value suit both? */
const registryValueError = (
  condition: Condition,
  declared: PropertyDefinition
): ConditionError | undefined => {
  const { id: conditionId, property, operator, value } = condition
  const invalid = (expected: string) => new InvalidConditionValue({ conditionId, property, operator, expected })
  const outsideEnum = (candidate: string) =>
    declared.type === "enum" && !declared.values.includes(candidate)
      ? new InvalidConditionEnumValue({ conditionId, property, value: candidate, allowed: declared.values })
      : undefined
  if (unary.includes(operator)) return value == null ? undefined : invalid("no value")
  if (listed.includes(operator)) {
    const expected = `a non-empty array, each ${typeWords[declared.type]}`
    if (!Array.isArray(value) || value.length === 0) return invalid(expected)
    if (!value.every((element) => fitsType(declared, element))) return invalid(expected)
    return value.map((element) => outsideEnum(element as string)).find((error) => error !== undefined)
  }
  if (!fitsType(declared, value)) return invalid(typeWords[declared.type])
  return outsideEnum(value as string)
}

/**
 * Checks an event trigger's tree against the watched label's definition: ids unique, each
 * property declared, each operator allowed for its property's type, each value of the shape the
 * operator and type need. The first problem in document order is reported.
 */
export const validateConditions = (
  tree: ConditionNode,
  label: string,
  definition: LabelDefinition
): Either.Either<void, ConditionError> =>
  firstError(tree, (condition) => {
    const { id: conditionId, property, operator } = condition
    const declared = own(definition.properties, property)
    if (declared === undefined) return new UnknownConditionProperty({ conditionId, label, property })
    if (!operatorsFor(declared.type).includes(operator)) {
      return new OperatorNotAllowed({ conditionId, property, type: declared.type, operator })
    }
    return registryValueError(condition, declared)
  })

/** `trigger` or `steps`, then non-empty segments. */
const stepPath = /^(?:trigger|steps)(?:\.[^.]+)*$/

const stepValueError = (condition: Condition): ConditionError | undefined => {
  const { id: conditionId, property, operator, value } = condition
  const invalid = (expected: string) => new InvalidConditionValue({ conditionId, property, operator, expected })
  if (unary.includes(operator)) return value == null ? undefined : invalid("no value")
  if (listed.includes(operator)) {
    return Array.isArray(value) && value.length > 0 ? undefined : invalid("a non-empty array")
  }
  if (ordered.includes(operator)) return typeof value === "number" && Number.isFinite(value) ? undefined : invalid("a finite number")
  if (temporal.includes(operator)) return typeof value === "string" && isDateTime(value) ? undefined : invalid(typeWords.datetime)
  return isScalar(value) ? undefined : invalid("a string, number or boolean")
}

/**
 * Checks a `condition` step's tree by shape only (its paths reach values no registry describes):
 * ids unique, each property a dotted path into `trigger` or `steps`, each value of the shape its
 * operator needs.
 */
export const validateStepConditions = (tree: ConditionNode): Either.Either<void, ConditionError> =>
  firstError(tree, (condition) =>
    stepPath.test(condition.property)
      ? stepValueError(condition)
      : new InvalidConditionPath({ conditionId: condition.id, property: condition.property })
  )

// ---------------------------------------------------------------------------------------------
// Evaluation

type JsonRecord = { readonly [key: string]: Json }

/**
 * What a tree is evaluated over. `current` holds values by property name (an event trigger) or as
 * `{ trigger, steps }` reached by dotted paths (a `condition` step). `previous` holds the values
 * before the event, for `changed`; without it nothing counts as changed.
 */
export interface Subject {
  readonly current: JsonRecord
  readonly previous?: JsonRecord
}

/** The value at a dotted path; `null` counts as absent. Array elements are reached by index. */
const valueAt = (root: JsonRecord, path: string): Json | undefined => {
  let at: Json | undefined = root
  for (const segment of path.split(".")) {
    if (Array.isArray(at)) at = /^\d+$/.test(segment) ? (at as ReadonlyArray<Json>)[Number(segment)] : undefined
    else if (isRecord(at)) at = own(at as JsonRecord, segment)
    else return undefined
  }
  return at ?? undefined
}

/** A datetime's instant in milliseconds, or undefined for anything else. */
const instantOf = (value: Json | undefined): number | undefined =>
  typeof value === "string" && isDateTime(value) ? Date.parse(value) : undefined

/** JSON equality, with two datetimes equal when they name the same instant. */
const same = (a: Json | undefined, b: Json | undefined): boolean => {
  if (a === b) return true
  const [instantA, instantB] = [instantOf(a), instantOf(b)]
  if (instantA !== undefined && instantB !== undefined) return instantA === instantB
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((element, i) => same(element, b[i]))
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && same(a[key], b[key]))
  }
  return false
}

const compareNumbers = (operator: "gt" | "gte" | "lt" | "lte", a: number, b: number): boolean => {
  switch (operator) {
    case "gt":
      return a > b
    case "gte":
      return a >= b
    case "lt":
      return a < b
    case "lte":
      return a <= b
  }
}

const holds = (condition: Condition, subject: Subject): boolean => {
  const current = valueAt(subject.current, condition.property)
  const expected = condition.value
  // a missing property equals nothing, so `neq` and `not_in` hold for it
  const equalsExpected = () => current !== undefined && expected != null && same(current, expected)
  const amongExpected = () =>
    current !== undefined && Array.isArray(expected) && expected.some((candidate) => same(current, candidate))
  switch (condition.operator) {
    case "exists":
      return current !== undefined
    case "not_exists":
      return current === undefined
    case "changed":
      return subject.previous !== undefined && !same(valueAt(subject.previous, condition.property), current)
    case "eq":
      return equalsExpected()
    case "neq":
      return !equalsExpected()
    case "in":
      return amongExpected()
    case "not_in":
      return !amongExpected()
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return typeof current === "number" && typeof expected === "number" && compareNumbers(condition.operator, current, expected)
    case "before":
    case "after": {
      const [at, bound] = [instantOf(current), instantOf(expected ?? undefined)]
      if (at === undefined || bound === undefined) return false
      return condition.operator === "before" ? at < bound : at > bound
    }
    case "contains":
      if (typeof current === "string") return typeof expected === "string" && current.includes(expected)
      return Array.isArray(current) && expected != null && current.some((element) => same(element, expected))
  }
}

/** Whether the tree holds for the subject: a group of `and` holds when every child does, of `or` when one does. */
export const evaluate = (tree: ConditionNode, subject: Subject): boolean => {
  if (tree.kind === "condition") return holds(tree, subject)
  return tree.combinator === "and"
    ? tree.children.every((child) => evaluate(child, subject))
    : tree.children.some((child) => evaluate(child, subject))
}

/** The properties with one side of an update's changes applied (`null` removes). */
const withChanges = (properties: JsonRecord, event: NodeUpdated, side: "from" | "to"): JsonRecord => {
  const result: { [key: string]: Json } = { ...properties }
  for (const [property, change] of Object.entries(event.changes)) {
    const value = change[side]
    if (value === null) delete result[property]
    else result[property] = value
  }
  return result
}

/**
 * The subject of a node event. Created: previous is empty, so every property set at creation has
 * changed. Updated: the event carries only the changes, so `propertiesAfter` (the node's properties
 * after the update) fills in the unchanged ones; without it conditions see only the changed
 * properties. Deleted: the node as it was last, and nothing changed.
 */
export const subjectOfNodeEvent = (event: NodeEvent, propertiesAfter?: Properties): Subject => {
  switch (event._tag) {
    case "node.created":
      return { current: event.properties, previous: {} }
    case "node.updated": {
      // the event's own changes win over a caller's copy that may lag behind it
      const current = withChanges(propertiesAfter ?? {}, event, "to")
      return { current, previous: withChanges(current, event, "from") }
    }
    case "node.deleted":
      return { current: event.properties, previous: event.properties }
  }
}
