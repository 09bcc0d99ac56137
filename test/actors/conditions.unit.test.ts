import { describe, expect, it } from "@effect/vitest"
import { Cause, Either, Schema } from "effect"
import {
  type Combinator,
  type Condition,
  type ConditionError,
  type ConditionNode,
  ConditionTree,
  type ConditionValue,
  DuplicateConditionId,
  evaluate,
  InvalidConditionEnumValue,
  InvalidConditionPath,
  InvalidConditionValue,
  OperatorNotAllowed,
  type Subject,
  subjectOfNodeEvent,
  UnknownConditionProperty,
  validateConditions,
  validateStepConditions
} from "../../actors/automation/conditions.ts"
import type { Json } from "../../actors/kernel.ts"
import { NodeCreated, NodeDeleted, NodeUpdated, type PropertyChange } from "../../actors/node/events.ts"
import type { LabelDefinition, Properties, PropertyType } from "../../actors/schema/definition.ts"
import type { Operator } from "../../actors/schema/operators.ts"
import { describeFailure } from "../../gateway/errors.ts"

const condition = (property: string, operator: Operator, value?: ConditionValue, id = "c1"): Condition =>
  value === undefined ? { kind: "condition", id, property, operator } : { kind: "condition", id, property, operator, value }

const group = (combinator: Combinator, children: ReadonlyArray<ConditionNode>, id = "g1"): ConditionNode => ({
  kind: "group",
  id,
  combinator,
  children
})

/** A group whose children get ids of their own, for trees where ids do not matter. */
const numbered = (combinator: Combinator, ...children: ReadonlyArray<ConditionNode>): ConditionNode => {
  let next = 0
  const renumber = (node: ConditionNode): ConditionNode =>
    node.kind === "condition"
      ? { ...node, id: `n${next++}` }
      : { ...node, id: `n${next++}`, children: node.children.map(renumber) }
  return renumber(group(combinator, children))
}

const decodeTree = Schema.decodeUnknownEither(ConditionTree)

/** A chain of groups `levels` deep (the root counts), ending in one condition. */
const nested = (levels: number): unknown => {
  let node: unknown = { kind: "condition", id: "leaf", property: "title", operator: "exists" }
  for (let level = 1; level < levels; level++) node = { kind: "group", id: `g${level}`, combinator: "and", children: [node] }
  return node
}

/** A root group holding `count - 1` conditions: `count` nodes in all. */
const wide = (count: number): unknown => ({
  kind: "group",
  id: "root",
  combinator: "or",
  children: Array.from({ length: count - 1 }, (_, i) => ({ kind: "condition", id: `c${i}`, property: "title", operator: "exists" }))
})

describe("ConditionTree (decoding automations' input)", () => {
  it("accepts a group of and/or with conditions and groups, value optional", () => {
    const tree = {
      kind: "group",
      id: "root",
      combinator: "and",
      children: [
        { kind: "condition", id: "a", property: "status", operator: "in", value: ["todo", "doing"] },
        { kind: "group", id: "b", combinator: "or", children: [{ kind: "condition", id: "c", property: "due", operator: "exists" }] }
      ]
    }
    expect(decodeTree(tree)).toEqual(Either.right(tree))
  })

  it.each([
    ["a tree 8 levels deep", nested(8)],
    ["a tree of 100 nodes", wide(100)]
  ])("accepts %s", (_, tree) => expect(Either.isRight(decodeTree(tree))).toBe(true))

  it.each([
    ["a tree 9 levels deep", nested(9), "a condition tree nests at most 8 levels"],
    ["a tree 50 000 levels deep, without exhausting the stack", nested(50_000), "a condition tree nests at most 8 levels"],
    ["a tree of 101 nodes", wide(101), "a condition tree holds at most 100 groups and conditions"],
    ["a group of a million children", wide(1_000_000), "a condition tree holds at most 100 groups and conditions"]
  ])("refuses %s", (_, tree, message) => {
    const result = decodeTree(tree)
    expect(Either.isLeft(result) && String(result.left.message)).toContain(message)
  })

  it.each([
    ["an unknown combinator", { kind: "group", id: "g", combinator: "xor", children: [] }],
    ["an unknown operator", { kind: "condition", id: "c", property: "title", operator: "like", value: "a" }],
    ["an empty id", { kind: "condition", id: "", property: "title", operator: "exists" }],
    ["an empty property", { kind: "condition", id: "c", property: "", operator: "exists" }],
    ["a nested object as value", { kind: "condition", id: "c", property: "title", operator: "eq", value: { a: 1 } }],
    ["a list of lists as value", { kind: "condition", id: "c", property: "title", operator: "in", value: [["a"]] }]
  ])("refuses %s", (_, tree) => expect(Either.isLeft(decodeTree(tree))).toBe(true))
})

const label = "Task"

/** One property of each data type. */
const definition: LabelDefinition = {
  properties: {
    title: { type: "string", required: true },
    points: { type: "number", required: false },
    done: { type: "boolean", required: false },
    due: { type: "datetime", required: false },
    status: { type: "enum", values: ["todo", "doing", "done"], required: false }
  }
}

const propertyOf: { readonly [T in PropertyType]: string } = {
  string: "title",
  number: "points",
  boolean: "done",
  datetime: "due",
  enum: "status"
}

/** The operators each data type takes (spec 2.8: operators are typed by the property's data type). */
const allowed: { readonly [T in PropertyType]: ReadonlyArray<Operator> } = {
  string: ["eq", "neq", "contains", "in", "not_in", "changed", "exists", "not_exists"],
  number: ["eq", "neq", "gt", "gte", "lt", "lte", "in", "not_in", "changed", "exists", "not_exists"],
  boolean: ["eq", "neq", "changed", "exists", "not_exists"],
  datetime: ["eq", "neq", "before", "after", "changed", "exists", "not_exists"],
  enum: ["eq", "neq", "in", "not_in", "changed", "exists", "not_exists"]
}

const operators: ReadonlyArray<Operator> = [
  "eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "not_in", "before", "after", "changed", "exists", "not_exists"
]

const sample: { readonly [T in PropertyType]: string | number | boolean } = {
  string: "urgent",
  number: 3,
  boolean: true,
  datetime: "2024-05-01T10:00:00Z",
  enum: "done"
}

/** A value of the right shape for the operator on a property of the type. */
const valueFor = (type: PropertyType, operator: Operator): ConditionValue | undefined => {
  if (operator === "exists" || operator === "not_exists" || operator === "changed") return undefined
  return operator === "in" || operator === "not_in" ? [sample[type]] : sample[type]
}

const validate = (tree: ConditionNode) => validateConditions(tree, label, definition)

const types: ReadonlyArray<PropertyType> = ["string", "number", "boolean", "datetime", "enum"]

const matrix = types.flatMap((type) => operators.map((operator) => ({ type, operator, allowed: allowed[type].includes(operator) })))

describe("validateConditions (event triggers, against the watched label)", () => {
  it.each(matrix.filter((row) => row.allowed))("allows $operator on a $type property", ({ type, operator }) =>
    expect(validate(condition(propertyOf[type], operator, valueFor(type, operator)))).toEqual(Either.void))

  it.each(matrix.filter((row) => !row.allowed))("refuses $operator on a $type property", ({ type, operator }) =>
    expect(validate(condition(propertyOf[type], operator, valueFor("number", operator)))).toEqual(
      Either.left(new OperatorNotAllowed({ conditionId: "c1", property: propertyOf[type], type, operator }))
    ))

  it("refuses a property the label does not declare, naming condition and label", () => {
    const result = validate(condition("priority", "exists"))
    expect(result).toEqual(Either.left(new UnknownConditionProperty({ conditionId: "c1", label, property: "priority" })))
    expect(Either.isLeft(result) && result.left.message).toBe("condition c1: label Task declares no property priority")
  })

  it("refuses an inherited name such as constructor as a property", () =>
    expect(validate(condition("constructor", "exists"))).toEqual(
      Either.left(new UnknownConditionProperty({ conditionId: "c1", label, property: "constructor" }))
    ))

  const allowedEnum = ["todo", "doing", "done"] as const

  it.each([
    ["eq", "closed"],
    ["neq", "closed"]
  ] as const)("refuses %s with a value outside the enum", (operator, value) =>
    expect(validate(condition("status", operator, value))).toEqual(
      Either.left(new InvalidConditionEnumValue({ conditionId: "c1", property: "status", value, allowed: [...allowedEnum] }))
    ))

  it.each(["in", "not_in"] as const)("refuses %s listing a value outside the enum, naming it", (operator) => {
    const result = validate(condition("status", operator, ["todo", "closed"]))
    expect(result).toEqual(
      Either.left(new InvalidConditionEnumValue({ conditionId: "c1", property: "status", value: "closed", allowed: [...allowedEnum] }))
    )
    expect(Either.isLeft(result) && result.left.message).toBe("condition c1: 'closed' is not a value of status (allowed: todo, doing, done)")
  })

  const wrongValues: ReadonlyArray<readonly [string, Condition, string]> = [
    ["a value for exists", condition("title", "exists", "x"), "no value"],
    ["a value for not_exists", condition("points", "not_exists", 1), "no value"],
    ["a value for changed", condition("status", "changed", "done"), "no value"],
    ["no value for eq", condition("title", "eq"), "a string"],
    ["null for eq", condition("title", "eq", null), "a string"],
    ["a number for eq on a string", condition("title", "eq", 1), "a string"],
    ["a string for gt on a number", condition("points", "gt", "3"), "a finite number"],
    ["a string for eq on a number", condition("points", "eq", "3"), "a finite number"],
    ["a string for eq on a boolean", condition("done", "eq", "true"), "true or false"],
    ["a non-string for contains", condition("title", "contains", 3), "a string"],
    ["a non-string for eq on an enum", condition("status", "eq", 1), "one of the enum's values"],
    ["a plain string for before", condition("due", "before", "tomorrow"), "an ISO 8601 date or date-time with offset"],
    ["a local time without offset for after", condition("due", "after", "2024-05-01T10:00:00"), "an ISO 8601 date or date-time with offset"],
    ["an impossible day for after", condition("due", "after", "2023-02-29"), "an ISO 8601 date or date-time with offset"],
    ["a number for before", condition("due", "before", 1714557600000), "an ISO 8601 date or date-time with offset"],
    ["a scalar for in", condition("status", "in", "todo"), "a non-empty array, each one of the enum's values"],
    ["an empty array for not_in", condition("points", "not_in", []), "a non-empty array, each a finite number"],
    ["a mixed array for in", condition("points", "in", [1, "2"]), "a non-empty array, each a finite number"],
    ["an array for eq", condition("title", "eq", ["a"]), "a string"]
  ]

  it.each(wrongValues)("refuses %s", (_, tree, expected) =>
    expect(validate(tree)).toEqual(
      Either.left(new InvalidConditionValue({ conditionId: "c1", property: tree.property, operator: tree.operator, expected }))
    ))

  it("says which condition, property and operator the value is wrong for", () => {
    const result = validate(condition("points", "gt", "3", "too-big"))
    expect(Either.isLeft(result) && result.left.message).toBe("condition too-big: gt on points takes a finite number")
  })

  it("accepts a date without time, and datetimes with any offset", () =>
    expect(
      validate(numbered("and", condition("due", "after", "2024-05-01"), condition("due", "before", "2024-05-01T10:00:00.5+05:30")))
    ).toEqual(Either.void))

  it("accepts null as the absent value of exists", () => expect(validate(condition("title", "exists", null))).toEqual(Either.void))

  it("checks every condition of nested groups and reports the first in document order", () => {
    const tree = group("and", [
      condition("title", "exists", undefined, "a"),
      group("or", [condition("points", "gt", 1, "b"), condition("done", "contains", "x", "c")], "inner"),
      condition("nope", "exists", undefined, "d")
    ])
    expect(validate(tree)).toEqual(
      Either.left(new OperatorNotAllowed({ conditionId: "c", property: "done", type: "boolean", operator: "contains" }))
    )
  })

  it.each([
    ["two conditions", group("and", [condition("title", "exists", undefined, "x"), condition("points", "exists", undefined, "x")]), "x"],
    ["a group and a condition in it", group("and", [condition("title", "exists", undefined, "g1")]), "g1"],
    [
      "conditions in different groups",
      group("or", [
        group("and", [condition("title", "exists", undefined, "x")], "a"),
        group("and", [condition("points", "exists", undefined, "x")], "b")
      ]),
      "x"
    ]
  ] as const)("refuses an id shared by %s", (_, tree, conditionId) =>
    expect(validate(tree)).toEqual(Either.left(new DuplicateConditionId({ conditionId }))))

  it("accepts an empty group", () => expect(validate(group("or", []))).toEqual(Either.void))
})

describe("validateStepConditions (condition steps, by shape)", () => {
  it.each([
    ["a trigger field", condition("trigger.status", "eq", "done")],
    ["a step's output", condition("steps.review.output.approved", "eq", true)],
    ["an array element", condition("steps.fetch.items.0", "exists")],
    ["the trigger itself", condition("trigger", "exists")],
    ["a step name with spaces", condition("steps.Ask a human.answer", "contains", "yes")],
    ["a number comparison", condition("steps.score.value", "gte", 0.5)],
    ["a datetime comparison", condition("trigger.due", "before", "2024-05-01T10:00:00Z")],
    ["a list", condition("trigger.status", "not_in", ["done", 3, false])],
    ["changed", condition("trigger.status", "changed")]
  ])("accepts %s", (_, tree) => expect(validateStepConditions(tree)).toEqual(Either.void))

  it.each(["status", "triggers.status", "trigger.", "steps..x", ".trigger", "input.x"])("refuses the path %s", (property) =>
    expect(validateStepConditions(condition(property, "exists"))).toEqual(
      Either.left(new InvalidConditionPath({ conditionId: "c1", property }))
    ))

  it.each([
    ["a value for exists", condition("trigger.x", "exists", 1), "no value"],
    ["a string for gt", condition("trigger.x", "gt", "1"), "a finite number"],
    ["a non-datetime for after", condition("trigger.x", "after", "soon"), "an ISO 8601 date or date-time with offset"],
    ["a scalar for in", condition("trigger.x", "in", "a"), "a non-empty array"],
    ["an empty array for not_in", condition("trigger.x", "not_in", []), "a non-empty array"],
    ["no value for eq", condition("trigger.x", "eq"), "a string, number or boolean"],
    ["an array for contains", condition("trigger.x", "contains", ["a"]), "a string, number or boolean"]
  ])("refuses %s", (_, tree, expected) =>
    expect(validateStepConditions(tree)).toEqual(
      Either.left(new InvalidConditionValue({ conditionId: "c1", property: tree.property, operator: tree.operator, expected }))
    ))

  it("refuses duplicate ids", () =>
    expect(validateStepConditions(group("and", [condition("trigger.a", "exists", undefined, "g1")]))).toEqual(
      Either.left(new DuplicateConditionId({ conditionId: "g1" }))
    ))
})

describe("evaluate", () => {
  const now = (current: Record<string, Json>): Subject => ({ current })

  const rows: ReadonlyArray<readonly [string, Condition, Record<string, Json>, boolean]> = [
    // equality
    ["eq on an equal string", condition("x", "eq", "a"), { x: "a" }, true],
    ["eq on another string", condition("x", "eq", "a"), { x: "b" }, false],
    ["eq on a missing property", condition("x", "eq", "a"), {}, false],
    ["eq on a null value (absent)", condition("x", "eq", "a"), { x: null }, false],
    ["eq between a number and its string", condition("x", "eq", 1), { x: "1" }, false],
    ["eq on booleans", condition("x", "eq", false), { x: false }, true],
    ["eq on one instant at two offsets", condition("x", "eq", "2024-05-01T10:00:00Z"), { x: "2024-05-01T12:00:00+02:00" }, true],
    ["eq on a date and its midnight UTC", condition("x", "eq", "2024-05-01"), { x: "2024-05-01T00:00:00Z" }, true],
    ["neq on another string", condition("x", "neq", "a"), { x: "b" }, true],
    ["neq on an equal string", condition("x", "neq", "a"), { x: "a" }, false],
    ["neq on a missing property", condition("x", "neq", "a"), {}, true],
    ["neq on one instant at two offsets", condition("x", "neq", "2024-05-01T10:00:00Z"), { x: "2024-05-01T11:00:00+01:00" }, false],
    // order
    ["gt above", condition("x", "gt", 3), { x: 5 }, true],
    ["gt equal", condition("x", "gt", 3), { x: 3 }, false],
    ["gte equal", condition("x", "gte", 3), { x: 3 }, true],
    ["gte below", condition("x", "gte", 3), { x: 2.5 }, false],
    ["lt below", condition("x", "lt", 0), { x: -1 }, true],
    ["lt equal", condition("x", "lt", 0), { x: 0 }, false],
    ["lte equal", condition("x", "lte", 0), { x: 0 }, true],
    ["lte above", condition("x", "lte", 0), { x: 1 }, false],
    ["gt on a missing property", condition("x", "gt", 3), {}, false],
    ["lt on a missing property", condition("x", "lt", 3), {}, false],
    ["gt on a numeric string", condition("x", "gt", 3), { x: "5" }, false],
    // lists
    ["in a listed value", condition("x", "in", ["a", "b"]), { x: "b" }, true],
    ["in an unlisted value", condition("x", "in", ["a", "b"]), { x: "c" }, false],
    ["in on a missing property", condition("x", "in", ["a", "b"]), {}, false],
    ["in a number list", condition("x", "in", [1, 2]), { x: 2 }, true],
    ["not_in an unlisted value", condition("x", "not_in", ["a", "b"]), { x: "c" }, true],
    ["not_in a listed value", condition("x", "not_in", ["a", "b"]), { x: "a" }, false],
    ["not_in on a missing property", condition("x", "not_in", ["a", "b"]), {}, true],
    // contains
    ["contains a substring", condition("x", "contains", "world"), { x: "hello world" }, true],
    ["contains with another case", condition("x", "contains", "World"), { x: "hello world" }, false],
    ["contains on a missing property", condition("x", "contains", "a"), {}, false],
    ["contains on a number", condition("x", "contains", "1"), { x: 10 }, false],
    ["contains an element of an array", condition("x", "contains", "b"), { x: ["a", "b"] }, true],
    ["contains on an array without it", condition("x", "contains", "c"), { x: ["a", "b"] }, false],
    ["contains a number in an array", condition("x", "contains", 2), { x: [1, 2] }, true],
    // datetimes, by instant
    ["before an instant that sorts earlier as a string", condition("x", "before", "2024-05-01T09:00:00Z"), { x: "2024-05-01T10:00:00+02:00" }, true],
    ["after an instant that sorts later as a string", condition("x", "after", "2024-05-01T09:00:00Z"), { x: "2024-05-01T10:00:00+02:00" }, false],
    ["after, a date against the evening before", condition("x", "after", "2024-04-30T23:59:59Z"), { x: "2024-05-01" }, true],
    ["before the same instant", condition("x", "before", "2024-05-01T10:00:00Z"), { x: "2024-05-01T10:00:00Z" }, false],
    ["after the same instant", condition("x", "after", "2024-05-01T10:00:00Z"), { x: "2024-05-01T10:00:00Z" }, false],
    ["before on a missing property", condition("x", "before", "2024-05-01T10:00:00Z"), {}, false],
    ["after on a missing property", condition("x", "after", "2024-05-01T10:00:00Z"), {}, false],
    ["before on a value that is not a datetime", condition("x", "before", "2024-05-01T10:00:00Z"), { x: "yesterday" }, false],
    // presence
    ["exists on a set property", condition("x", "exists"), { x: "" }, true],
    ["exists on false", condition("x", "exists"), { x: false }, true],
    ["exists on a missing property", condition("x", "exists"), {}, false],
    ["exists on null", condition("x", "exists"), { x: null }, false],
    ["not_exists on a missing property", condition("x", "not_exists"), {}, true],
    ["not_exists on a set property", condition("x", "not_exists"), { x: 0 }, false],
    ["exists on an inherited name", condition("constructor", "exists"), {}, false],
    ["changed without previous values", condition("x", "changed"), { x: "a" }, false],
    // dotted paths (condition steps)
    ["a path into a step's output", condition("steps.review.approved", "eq", true), { steps: { review: { approved: true } } }, true],
    ["a path into an array", condition("steps.fetch.items.1", "eq", "b"), { steps: { fetch: { items: ["a", "b"] } } }, true],
    ["a path past the end of an array", condition("steps.fetch.items.2", "exists"), { steps: { fetch: { items: ["a", "b"] } } }, false],
    ["a path through a scalar", condition("trigger.title.length", "exists"), { trigger: { title: "abc" } }, false],
    ["a path into a step that has not run", condition("steps.later.ok", "neq", true), { steps: {} }, true]
  ]

  it.each(rows)("%s", (_, tree, current, expected) => expect(evaluate(tree, now(current))).toBe(expected))

  const yes = condition("x", "exists")
  const no = condition("x", "not_exists")
  const groups: ReadonlyArray<readonly [string, ConditionNode, boolean]> = [
    ["an empty and", numbered("and"), true],
    ["an empty or", numbered("or"), false],
    ["and of true and false", numbered("and", yes, no), false],
    ["and of true and true", numbered("and", yes, yes), true],
    ["or of false and true", numbered("or", no, yes), true],
    ["or of false and false", numbered("or", no, no), false],
    ["and holding an or that holds", numbered("and", yes, group("or", [no, yes])), true],
    ["or holding an and that fails", numbered("or", no, group("and", [yes, no])), false],
    ["three levels", numbered("and", group("or", [no, group("and", [yes, group("or", [])])]), yes), false],
    ["an empty and inside an or", numbered("or", no, group("and", [])), true]
  ]

  it.each(groups)("%s", (_, tree, expected) => expect(evaluate(tree, now({ x: 1 }))).toBe(expected))
})

describe("subjectOfNodeEvent and changed", () => {
  const base = { nodeId: "n1", workspaceId: "w1", label } as const
  const at = "2024-05-01T10:00:00Z"
  const created = new NodeCreated({ ...base, properties: { title: "Write spec", status: "todo" }, at })
  const updated = (changes: Record<string, PropertyChange>) => new NodeUpdated({ ...base, changes, at })
  const deleted = new NodeDeleted({ ...base, properties: { title: "Write spec", status: "done" } })
  const after: Properties = { title: "Write spec", status: "done", points: 3 }
  const statusDone = updated({ status: { from: "todo", to: "done" } })

  const rows: ReadonlyArray<readonly [string, Subject, ConditionNode, boolean]> = [
    ["created: a property set at creation has changed", subjectOfNodeEvent(created), condition("status", "changed"), true],
    ["created: an unset property has not changed", subjectOfNodeEvent(created), condition("due", "changed"), false],
    ["created: conditions see the new properties", subjectOfNodeEvent(created), condition("status", "eq", "todo"), true],
    ["updated: the changed property has changed", subjectOfNodeEvent(statusDone, after), condition("status", "changed"), true],
    ["updated: an unchanged property has not", subjectOfNodeEvent(statusDone, after), condition("title", "changed"), false],
    ["updated: unchanged properties come from the properties after", subjectOfNodeEvent(statusDone, after), condition("points", "gte", 3), true],
    ["updated: without them only the changes are known", subjectOfNodeEvent(statusDone), condition("points", "exists"), false],
    ["updated: without them the change is still seen", subjectOfNodeEvent(statusDone), condition("status", "changed"), true],
    ["updated: the event's change wins over stale properties after", subjectOfNodeEvent(statusDone, { ...after, status: "todo" }), condition("status", "eq", "done"), true],
    [
      "updated: changed from todo and now done",
      subjectOfNodeEvent(statusDone, after),
      group("and", [condition("status", "changed", undefined, "a"), condition("status", "eq", "done", "b")]),
      true
    ],
    ["updated: a removed property has changed", subjectOfNodeEvent(updated({ points: { from: 3, to: null } }), { title: "T" }), condition("points", "changed"), true],
    ["updated: a removed property no longer exists", subjectOfNodeEvent(updated({ points: { from: 3, to: null } }), { title: "T" }), condition("points", "not_exists"), true],
    ["updated: a property set for the first time has changed", subjectOfNodeEvent(updated({ due: { from: null, to: at } }), { title: "T", due: at }), condition("due", "changed"), true],
    ["updated: one instant rewritten at another offset has not changed", subjectOfNodeEvent(updated({ due: { from: at, to: "2024-05-01T12:00:00+02:00" } })), condition("due", "changed"), false],
    ["deleted: nothing has changed", subjectOfNodeEvent(deleted), condition("status", "changed"), false],
    ["deleted: conditions see the last properties", subjectOfNodeEvent(deleted), condition("status", "eq", "done"), true]
  ]

  it.each(rows)("%s", (_, subject, tree, expected) => expect(evaluate(tree, subject)).toBe(expected))
})

describe("condition errors over HTTP", () => {
  const errors: ReadonlyArray<readonly [ConditionError, string]> = [
    [new UnknownConditionProperty({ conditionId: "c1", label, property: "priority" }), "unknown_property"],
    [new OperatorNotAllowed({ conditionId: "c1", property: "done", type: "boolean", operator: "gt" }), "operator_not_allowed"],
    [new InvalidConditionEnumValue({ conditionId: "c1", property: "status", value: "closed", allowed: ["todo"] }), "invalid_enum_value"],
    [new InvalidConditionValue({ conditionId: "c1", property: "points", operator: "gt", expected: "a finite number" }), "invalid_condition_value"],
    [new InvalidConditionPath({ conditionId: "c1", property: "input.x" }), "invalid_condition_path"],
    [new DuplicateConditionId({ conditionId: "c1" }), "duplicate_condition_id"]
  ]

  it.each(errors)("%s is 400 bad_request with reason %s, naming the condition", (error, reason) =>
    expect(describeFailure(Cause.fail(error))).toMatchObject({ status: 400, code: "bad_request", reason, message: expect.stringContaining("c1") }))

  it("names the operators a type allows when refusing one", () =>
    expect(new OperatorNotAllowed({ conditionId: "c1", property: "done", type: "boolean", operator: "gt" }).message).toBe(
      "condition c1: operator gt does not apply to done, a boolean property (allowed: eq, neq, changed, exists, not_exists)"
    ))
})
