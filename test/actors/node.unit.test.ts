import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { NodeActor } from "../../actors/node/actor.ts"
import { NodeAlreadyExists, type NodeError, NodeNotFound } from "../../actors/node/errors.ts"
import { NodeCreated, NodeDeleted, type NodeEvent, NodeUpdated } from "../../actors/node/events.ts"
import { applyChanges } from "../../actors/node/evolve.ts"
import { CreateNode, DeleteNode, UpdateNode } from "../../actors/node/protocol.ts"
import type { LabelDefinition, Properties, PropertiesInput, PropertyDefinition } from "../../actors/schema/definition.ts"
import { InvalidEnumValue, InvalidPropertyType, MissingProperty, UnknownProperty } from "../../actors/schema/errors.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const T0 = "2024-05-01T10:00:00.000Z"
const T1 = "2024-05-01T11:00:00.000Z"
const T2 = "2024-05-01T12:00:00.000Z"

const task: LabelDefinition = {
  properties: {
    title: { type: "string", required: true },
    status: { type: "enum", values: ["todo", "doing", "done"], required: true },
    estimate: { type: "number", required: false },
    done: { type: "boolean", required: false },
    due: { type: "datetime", required: false }
  }
}

const node = { nodeId: "n1", workspaceId: "w1" }
const create = (properties: PropertiesInput, definition = task) =>
  new CreateNode({ ...node, label: "Task", properties, definition })
const update = (properties: PropertiesInput, definition = task) => new UpdateNode({ ...node, properties, definition })
const created = (properties: Properties) => new NodeCreated({ ...node, label: "Task", properties, at: T0 })
/** An update of the node as `before` holds it (`write`'s properties when omitted). */
const updated = (changes: NodeUpdated["changes"], at = T1, before: Properties = write.properties) =>
  new NodeUpdated({ ...node, label: "Task", changes, properties: applyChanges(before, changes), at })
const deleted = (properties: Properties) => new NodeDeleted({ ...node, label: "Task", properties })

const write = created({ title: "Write", status: "todo", estimate: 3 })

/** Values of the wrong data type, and malformed datetimes. */
const wrongTypes: ReadonlyArray<readonly [string, PropertiesInput, NodeError]> = [
  ["a number for a string", { title: 1 }, new InvalidPropertyType({ property: "title", expected: "string" })],
  ["a string for a number", { estimate: "3" }, new InvalidPropertyType({ property: "estimate", expected: "number" })],
  ["NaN for a number", { estimate: Number.NaN }, new InvalidPropertyType({ property: "estimate", expected: "number" })],
  ["Infinity for a number", { estimate: Infinity }, new InvalidPropertyType({ property: "estimate", expected: "number" })],
  ["a string for a boolean", { done: "yes" }, new InvalidPropertyType({ property: "done", expected: "boolean" })],
  ["a number for a datetime", { due: 1714557600000 }, new InvalidPropertyType({ property: "due", expected: "datetime" })],
  ["words for a datetime", { due: "tomorrow" }, new InvalidPropertyType({ property: "due", expected: "datetime" })],
  ["a non-ISO date", { due: "May 1, 2024" }, new InvalidPropertyType({ property: "due", expected: "datetime" })],
  ["an impossible day", { due: "2023-02-29" }, new InvalidPropertyType({ property: "due", expected: "datetime" })],
  ["an impossible month", { due: "2024-13-01T00:00:00Z" }, new InvalidPropertyType({ property: "due", expected: "datetime" })],
  ["a time without offset", { due: "2024-05-01T10:00:00" }, new InvalidPropertyType({ property: "due", expected: "datetime" })],
  ["a number for an enum", { status: 1 }, new InvalidPropertyType({ property: "status", expected: "enum" })],
  [
    "an undeclared enum value",
    { status: "blocked" },
    new InvalidEnumValue({ property: "status", value: "blocked", allowed: ["todo", "doing", "done"] })
  ],
  ["an undeclared property", { colour: "red" }, new UnknownProperty({ property: "colour" })],
  // `toString` is on every object's prototype; the label does not declare it.
  ["a property named like an Object member", { toString: "x" }, new UnknownProperty({ property: "toString" })]
]

describe("CreateNode", () => {
  it("creates the node with the values that are set", () =>
    spec(NodeActor)
      .given([])
      .when(
        create({ title: "Write", status: "todo", estimate: 3, done: false, due: "2024-06-01T09:00:00+02:00", note: null }),
        meta({ at: T0 })
      )
      .then([created({ title: "Write", status: "todo", estimate: 3, done: false, due: "2024-06-01T09:00:00+02:00" })]))

  it("leaves a property given as null unset", () =>
    spec(NodeActor)
      .given([])
      .when(create({ title: "Write", status: "todo", estimate: 3, done: null }), meta({ at: T0 }))
      .then([write]))

  it.each(["2024-02-29", "2024-05-01T10:00Z", "2024-05-01T10:00:00Z", "2024-05-01T10:00:00.123456-05:30"])(
    "accepts the datetime %s",
    (due) =>
      spec(NodeActor)
        .given([])
        .when(create({ title: "Write", status: "done", due }), meta({ at: T0 }))
        .then([created({ title: "Write", status: "done", due })])
  )

  it.each(wrongTypes)("rejects %s", (_, properties, error) =>
    spec(NodeActor)
      .given([])
      .when(create({ title: "Write", status: "todo", ...properties }))
      .thenThrows(error))

  it.each([
    ["absent", { status: "todo" }],
    ["null", { title: null, status: "todo" }]
  ] as const)("rejects a required property that is %s", (_, properties) =>
    spec(NodeActor).given([]).when(create(properties)).thenThrows(new MissingProperty({ property: "title" })))

  it("does not take a required property from Object's prototype", () => {
    // Typed apart: in an object literal, TypeScript types a `constructor` key as Object's member.
    const required: PropertyDefinition = { type: "string", required: true }
    spec(NodeActor)
      .given([])
      .when(create({}, { properties: { constructor: required } }))
      .thenThrows(new MissingProperty({ property: "constructor" }))
  })

  it.each([
    ["a live node", [write]],
    ["a deleted node", [write, deleted(write.properties)]],
    ["a node of another workspace", [new NodeCreated({ ...write, workspaceId: "w2" })]]
  ] as const)("rejects an id taken by %s", (_, history) =>
    spec(NodeActor)
      .given(history)
      .when(create({ title: "Write", status: "todo" }))
      .thenThrows(new NodeAlreadyExists({ nodeId: "n1" })))
})

describe("UpdateNode", () => {
  it("records only the properties that change, with their previous values", () =>
    spec(NodeActor)
      .given([write])
      .when(update({ title: "Write", status: "doing", done: true }), meta({ at: T1 }))
      .then([updated({ status: { from: "todo", to: "doing" }, done: { from: null, to: true } })]))

  it("removes a property given as null", () =>
    spec(NodeActor)
      .given([write])
      .when(update({ estimate: null }), meta({ at: T1 }))
      .then([updated({ estimate: { from: 3, to: null } })]))

  it.each([
    ["no properties", {}],
    ["the current values", { title: "Write", estimate: 3 }],
    ["the removal of an absent property", { done: null }]
  ] as const)("does nothing when given %s", (_, properties) =>
    spec(NodeActor).given([write]).when(update(properties)).thenNothingHappened())

  it("keeps required properties the update leaves out", () =>
    spec(NodeActor)
      .given([write])
      .when(update({ estimate: 5 }), meta({ at: T1 }))
      .then([updated({ estimate: { from: 3, to: 5 } })]))

  it("checks values against the definition it is given, such as a replaced one", () =>
    spec(NodeActor)
      .given([write])
      .when(
        update(
          { status: "blocked" },
          { properties: { ...task.properties, status: { type: "enum", values: ["todo", "blocked"], required: true } } }
        ),
        meta({ at: T1 })
      )
      .then([updated({ status: { from: "todo", to: "blocked" } })]))

  it("removes a property the label no longer declares", () =>
    spec(NodeActor)
      .given([write])
      .when(update({ estimate: null }, { properties: { title: task.properties.title, status: task.properties.status } }))
      .then([updated({ estimate: { from: 3, to: null } }, meta().at)]))

  it.each(wrongTypes)("rejects %s", (_, properties, error) =>
    spec(NodeActor).given([write]).when(update(properties)).thenThrows(error))

  it("rejects the removal of a required property", () =>
    spec(NodeActor)
      .given([write])
      .when(update({ title: null }))
      .thenThrows(new MissingProperty({ property: "title" })))

  it.each([
    ["a missing node", []],
    ["a deleted node", [write, deleted(write.properties)]],
    ["a node of another workspace", [new NodeCreated({ ...write, workspaceId: "w2" })]]
  ] as const)("does not find %s", (_, history) =>
    spec(NodeActor)
      .given(history)
      .when(update({ estimate: 5 }))
      .thenThrows(new NodeNotFound({ nodeId: "n1", workspaceId: "w1" })))

  it("applies changes on top of earlier ones", () =>
    spec(NodeActor)
      .given([write, updated({ status: { from: "todo", to: "doing" }, estimate: { from: 3, to: null } })])
      .when(update({ status: "done", estimate: 8 }), meta({ at: T2 }))
      .then([updated({ status: { from: "doing", to: "done" }, estimate: { from: null, to: 8 } }, T2, { title: "Write", status: "doing" })]))
})

describe("DeleteNode", () => {
  it("deletes the node with its last values", () =>
    spec(NodeActor)
      .given([write, updated({ status: { from: "todo", to: "doing" }, estimate: { from: 3, to: null } })])
      .when(new DeleteNode(node))
      .then([deleted({ title: "Write", status: "doing" })]))

  it.each([
    ["a missing node", []],
    ["a deleted node", [write, deleted(write.properties)]],
    ["a node of another workspace", [new NodeCreated({ ...write, workspaceId: "w2" })]]
  ] as const)("does not find %s", (_, history) =>
    spec(NodeActor)
      .given(history)
      .when(new DeleteNode(node))
      .thenThrows("NodeNotFound"))
})

describe("nodes projection", () => {
  const history: ReadonlyArray<readonly [NodeEvent, string]> = [
    [write, T0],
    [updated({ status: { from: "todo", to: "doing" } }, T1), T1],
    [updated({ estimate: { from: 3, to: null }, done: { from: null, to: true } }, T2), T2]
  ]

  it("holds the node's current values, version and times", () =>
    expect(projectedRows(NodeActor, "node:n1", history)).toEqual({
      nodes: [
        {
          node_id: "n1",
          workspace_id: "w1",
          label: "Task",
          properties: { title: "Write", status: "doing", done: true },
          version: 3,
          created_at: T0,
          updated_at: T2
        }
      ]
    }))

  it("drops the row of a deleted node", () =>
    expect(
      projectedRows(NodeActor, "node:n1", [...history, [deleted({ title: "Write", status: "doing", done: true }), T2]])
    ).toEqual({ nodes: [] }))

  it("rebuilds the same rows on replay", () =>
    expect(JSON.stringify(projectedRows(NodeActor, "node:n1", history))).toBe(
      JSON.stringify(projectedRows(NodeActor, "node:n1", history))
    ))
})

describe("wire formats", () => {
  const events: ReadonlyArray<NodeEvent> = [
    write,
    updated({ status: { from: "todo", to: "doing" }, estimate: { from: 3, to: null }, done: { from: null, to: false } }),
    deleted({ title: "Write", status: "doing" })
  ]

  it.effect("events survive JSON", () =>
    Effect.forEach(events, (event) =>
      jsonRoundTrip(NodeActor.events, event).pipe(Effect.map((decoded) => expect(decoded).toEqual(event)))
    ))

  it.effect("commands and errors survive JSON", () =>
    Effect.gen(function* () {
      for (const command of [create({ title: "Write", status: "todo", done: null }), update({ estimate: null }), new DeleteNode(node)]) {
        expect(yield* jsonRoundTrip(NodeActor.commands, command)).toEqual(command)
      }
      const errors: ReadonlyArray<NodeError> = [
        new NodeNotFound({ nodeId: "n1", workspaceId: "w1" }),
        new NodeAlreadyExists({ nodeId: "n1" }),
        new MissingProperty({ property: "title" }),
        ...wrongTypes.map(([, , error]) => error)
      ]
      for (const error of errors) expect(yield* jsonRoundTrip(NodeActor.errors, error)).toEqual(error)
    }))
})
