import { Schema } from "effect"
import { LabelDefinition } from "./definition.ts"

export const DefinedLabel = Schema.Struct({ ...LabelDefinition.fields, version: Schema.Int })
export type DefinedLabel = typeof DefinedLabel.Type

/** The current definition of every label of the workspace, by label name. */
export const SchemaState = Schema.Struct({ labels: Schema.Record({ key: Schema.String, value: DefinedLabel }) })
export type SchemaState = typeof SchemaState.Type

export const initialState: SchemaState = { labels: {} }
