/** Commands of the schema registry, one actor per workspace (`schema:<workspaceId>`). */
import { Schema } from "effect"
import { PropertySpec } from "./definition.ts"

/** Defines a label, or replaces its definition with a new version. */
export class DefineLabel extends Schema.TaggedClass<DefineLabel>()("DefineLabel", {
  workspaceId: Schema.NonEmptyString,
  // Names are checked by the decider so that a bad one is a typed rejection, not a decode failure.
  label: Schema.String,
  properties: Schema.Record({ key: Schema.String, value: PropertySpec })
}) {}

export const SchemaCommand = DefineLabel
export type SchemaCommand = DefineLabel
