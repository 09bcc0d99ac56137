/**
 * Events of a workspace node; automations trigger on these tags (spec 2.8), so they are never
 * renamed. `at` repeats the command's time because `evolve` sees only the event and the state keeps
 * `createdAt` / `updatedAt`.
 */
import { Schema } from "effect"
import { Properties, PropertyValue } from "../schema/definition.ts"

export class NodeCreated extends Schema.TaggedClass<NodeCreated>()("node.created", {
  nodeId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  label: Schema.NonEmptyString,
  properties: Properties,
  at: Schema.String
}) {}

/** `null` on either side of a change means the property was, or becomes, absent. */
export const PropertyChange = Schema.Struct({ from: Schema.NullOr(PropertyValue), to: Schema.NullOr(PropertyValue) })
export type PropertyChange = typeof PropertyChange.Type

/** Carries the properties that changed and the node's properties after them, so automations
 * evaluate their conditions (`changed` included) without the node's state. */
export class NodeUpdated extends Schema.TaggedClass<NodeUpdated>()("node.updated", {
  nodeId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  label: Schema.NonEmptyString,
  changes: Schema.Record({ key: Schema.String, value: PropertyChange }),
  /** Absent on updates logged before it was carried. */
  properties: Schema.optional(Properties),
  at: Schema.String
}) {}

/** Carries the last values so that consumers of a deletion need no earlier event. */
export class NodeDeleted extends Schema.TaggedClass<NodeDeleted>()("node.deleted", {
  nodeId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  label: Schema.NonEmptyString,
  properties: Properties
}) {}

export const NodeEvent = Schema.Union(NodeCreated, NodeUpdated, NodeDeleted)
export type NodeEvent = typeof NodeEvent.Type
