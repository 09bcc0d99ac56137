/**
 * Commands of a workspace node (`node:<nodeId>`). Each carries the definition of the node's label,
 * read by the application from `schema_labels`, so that the decider checks values without I/O.
 */
import { Schema } from "effect"
import { LabelDefinition, PropertiesInput } from "../schema/definition.ts"

export class CreateNode extends Schema.TaggedClass<CreateNode>()("CreateNode", {
  nodeId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  label: Schema.NonEmptyString,
  properties: PropertiesInput,
  definition: LabelDefinition
}) {}

/** A partial update: a value sets the property, `null` removes it, an omitted property is kept. */
export class UpdateNode extends Schema.TaggedClass<UpdateNode>()("UpdateNode", {
  nodeId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  properties: PropertiesInput,
  definition: LabelDefinition
}) {}

export class DeleteNode extends Schema.TaggedClass<DeleteNode>()("DeleteNode", {
  nodeId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString
}) {}

export const NodeCommand = Schema.Union(CreateNode, UpdateNode, DeleteNode)
export type NodeCommand = typeof NodeCommand.Type
