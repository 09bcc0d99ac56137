/** Events of the schema registry. A published `_tag` is never renamed. */
import { Schema } from "effect"
import { PropertyDefinitions } from "./definition.ts"

export class LabelDefined extends Schema.TaggedClass<LabelDefined>()("schema.label_defined", {
  workspaceId: Schema.NonEmptyString,
  label: Schema.String,
  properties: PropertyDefinitions,
  /** 1 for the first definition of the label, +1 for each replacement. */
  version: Schema.Int
}) {}

export const SchemaEvent = LabelDefined
export type SchemaEvent = LabelDefined
