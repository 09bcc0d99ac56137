import { Schema } from "effect"
import { Properties } from "../schema/definition.ts"

export const LiveNode = Schema.TaggedStruct("live", {
  nodeId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  label: Schema.NonEmptyString,
  properties: Properties,
  /** 1 on creation, +1 per update that changed something. */
  version: Schema.Int,
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type LiveNode = typeof LiveNode.Type

/** A deleted node is a tombstone: its id is never reused, so a key has one lifecycle on the log. */
export const NodeState = Schema.Union(Schema.TaggedStruct("absent", {}), LiveNode, Schema.TaggedStruct("deleted", {}))
export type NodeState = typeof NodeState.Type

export const initialState: NodeState = { _tag: "absent" }
