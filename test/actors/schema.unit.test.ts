import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SchemaActor } from "../../actors/schema/actor.ts"
import type { PropertyDefinition, PropertySpec, PropertyType } from "../../actors/schema/definition.ts"
import {
  DuplicateEnumValue,
  EnumValuesNotAllowed,
  EnumValuesRequired,
  InvalidLabelName,
  InvalidPropertyName,
  type SchemaError
} from "../../actors/schema/errors.ts"
import { LabelDefined } from "../../actors/schema/events.ts"
import { type Operator, operatorsFor } from "../../actors/schema/operators.ts"
import { DefineLabel } from "../../actors/schema/protocol.ts"
import { jsonRoundTrip, projectedRows, spec } from "../support/decider.ts"

const workspaceId = "w1"

const define = (label: string, properties: Record<string, PropertySpec>) =>
  new DefineLabel({ workspaceId, label, properties })

const taskV1 = new LabelDefined({
  workspaceId,
  label: "Task",
  properties: {
    title: { type: "string", required: true },
    status: { type: "enum", values: ["todo", "done"], required: false }
  },
  version: 1
})

const taskV2 = new LabelDefined({
  workspaceId,
  label: "Task",
  properties: { title: { type: "string", required: true }, due: { type: "datetime", required: false } },
  version: 2
})

const rejections: ReadonlyArray<readonly [string, DefineLabel, SchemaError]> = [
  ["an empty label", define("", {}), new InvalidLabelName({ label: "" })],
  ["a label starting with a digit", define("1Task", {}), new InvalidLabelName({ label: "1Task" })],
  ["a label with a dash", define("my-task", {}), new InvalidLabelName({ label: "my-task" })],
  ["a label of 65 characters", define(`L${"a".repeat(64)}`, {}), new InvalidLabelName({ label: `L${"a".repeat(64)}` })],
  [
    "a property starting with an underscore",
    define("Task", { _id: { type: "string" } }),
    new InvalidPropertyName({ label: "Task", property: "_id" })
  ],
  [
    "a property with a space",
    define("Task", { "due date": { type: "datetime" } }),
    new InvalidPropertyName({ label: "Task", property: "due date" })
  ],
  [
    "an enum without values",
    define("Task", { status: { type: "enum" } }),
    new EnumValuesRequired({ label: "Task", property: "status" })
  ],
  [
    "an enum with an empty list of values",
    define("Task", { status: { type: "enum", values: [] } }),
    new EnumValuesRequired({ label: "Task", property: "status" })
  ],
  [
    "an enum with a repeated value",
    define("Task", { status: { type: "enum", values: ["todo", "done", "todo"] } }),
    new DuplicateEnumValue({ label: "Task", property: "status", value: "todo" })
  ],
  [
    "values on a property that is not an enum",
    define("Task", { title: { type: "string", values: ["a"] } }),
    new EnumValuesNotAllowed({ label: "Task", property: "title", type: "string" })
  ],
  [
    "an empty list of values on a property that is not an enum",
    define("Task", { done: { type: "boolean", values: [] } }),
    new EnumValuesNotAllowed({ label: "Task", property: "done", type: "boolean" })
  ]
]

describe("DefineLabel", () => {
  it("defines a new label at version 1, with `required` made explicit", () =>
    spec(SchemaActor)
      .given([])
      .when(
        define("Task", {
          title: { type: "string", required: true },
          status: { type: "enum", values: ["todo", "done"] }
        })
      )
      .then([taskV1]))

  it("accepts every data type and a label without properties", () => {
    spec(SchemaActor)
      .given([])
      .when(
        define("Measure_2", {
          n: { type: "number" },
          b: { type: "boolean", required: false },
          d: { type: "datetime" },
          s: { type: "string" },
          e: { type: "enum", values: ["x"], required: true }
        })
      )
      .then([
        new LabelDefined({
          workspaceId,
          label: "Measure_2",
          properties: {
            n: { type: "number", required: false },
            b: { type: "boolean", required: false },
            d: { type: "datetime", required: false },
            s: { type: "string", required: false },
            e: { type: "enum", values: ["x"], required: true }
          },
          version: 1
        })
      ])
    spec(SchemaActor)
      .given([])
      .when(define("Empty", {}))
      .then([new LabelDefined({ workspaceId, label: "Empty", properties: {}, version: 1 })])
  })

  it("replaces an existing definition with the next version", () =>
    spec(SchemaActor)
      .given([taskV1])
      .when(define("Task", { title: { type: "string", required: true }, due: { type: "datetime" } }))
      .then([taskV2]))

  it("counts versions per label", () => {
    spec(SchemaActor)
      .given([taskV1, taskV2])
      .when(define("Task", {}))
      .then([new LabelDefined({ workspaceId, label: "Task", properties: {}, version: 3 })])
    spec(SchemaActor)
      .given([taskV1, taskV2])
      .when(define("Note", {}))
      .then([new LabelDefined({ workspaceId, label: "Note", properties: {}, version: 1 })])
  })

  it("takes names that shadow Object.prototype members as ordinary names", () => {
    // Typed apart: in an object literal, TypeScript types a `toString` key as Object's member.
    const declared: PropertySpec = { type: "string" }
    const definition: PropertyDefinition = { type: "string", required: false }
    const defined = new LabelDefined({ workspaceId, label: "constructor", properties: { toString: definition }, version: 1 })
    spec(SchemaActor).given([]).when(define("constructor", { toString: declared })).then([defined])
    spec(SchemaActor)
      .given([defined])
      .when(define("constructor", {}))
      .then([new LabelDefined({ workspaceId, label: "constructor", properties: {}, version: 2 })])
  })

  it("accepts names of 64 characters", () => {
    const label = `L${"a".repeat(63)}`
    const property = `p${"_".repeat(63)}`
    const declared: PropertySpec = { type: "boolean" }
    const definition: PropertyDefinition = { type: "boolean", required: false }
    spec(SchemaActor)
      .given([])
      .when(define(label, { [property]: declared }))
      .then([new LabelDefined({ workspaceId, label, properties: { [property]: definition }, version: 1 })])
  })

  it.each(rejections)("rejects %s", (_, command, error) =>
    spec(SchemaActor).given([taskV1]).when(command).thenThrows(error))
})

describe("operatorsFor", () => {
  const table: ReadonlyArray<readonly [PropertyType, ReadonlyArray<Operator>]> = [
    ["string", ["eq", "neq", "contains", "in", "not_in", "changed", "exists", "not_exists"]],
    ["number", ["eq", "neq", "gt", "gte", "lt", "lte", "in", "not_in", "changed", "exists", "not_exists"]],
    ["boolean", ["eq", "neq", "changed", "exists", "not_exists"]],
    ["datetime", ["eq", "neq", "before", "after", "changed", "exists", "not_exists"]],
    ["enum", ["eq", "neq", "in", "not_in", "changed", "exists", "not_exists"]]
  ]

  it.each(table)("%s", (type, operators) => expect([...operatorsFor(type)].sort()).toEqual([...operators].sort()))
})

describe("schema_labels projection", () => {
  const history: ReadonlyArray<readonly [LabelDefined, string]> = [
    [taskV1, "2024-05-01T10:00:00.000Z"],
    [new LabelDefined({ workspaceId, label: "Note", properties: {}, version: 1 }), "2024-05-01T11:00:00.000Z"],
    [taskV2, "2024-05-01T12:00:00.000Z"]
  ]

  it("holds the current definition of each label", () =>
    expect(projectedRows(SchemaActor, "schema:w1", history)).toEqual({
      schema_labels: [
        {
          workspace_id: "w1",
          label: "Note",
          properties: {},
          version: 1,
          updated_at: "2024-05-01T11:00:00.000Z"
        },
        {
          workspace_id: "w1",
          label: "Task",
          properties: { title: { type: "string", required: true }, due: { type: "datetime", required: false } },
          version: 2,
          updated_at: "2024-05-01T12:00:00.000Z"
        }
      ]
    }))

  it("rebuilds the same rows on replay", () =>
    expect(JSON.stringify(projectedRows(SchemaActor, "schema:w1", history))).toBe(
      JSON.stringify(projectedRows(SchemaActor, "schema:w1", history))
    ))
})

describe("wire formats", () => {
  it.effect("events survive JSON", () =>
    Effect.forEach([taskV1, taskV2], (event) =>
      jsonRoundTrip(SchemaActor.events, event).pipe(Effect.map((decoded) => expect(decoded).toEqual(event)))
    ))

  it.effect("commands and errors survive JSON", () =>
    Effect.gen(function* () {
      const command = define("Task", { status: { type: "enum", values: ["a"], required: true }, n: { type: "number" } })
      expect(yield* jsonRoundTrip(SchemaActor.commands, command)).toEqual(command)
      for (const [, , error] of rejections) expect(yield* jsonRoundTrip(SchemaActor.errors, error)).toEqual(error)
    }))
})
