/** Commands of the models actor. The capabilities validate and normalize model ids and seal keys;
 * time comes from the command's metadata. */
import { Schema, Struct } from "effect"
import { KeyFamily, ModelKeySet, TierSet } from "./events.ts"

/** Defines a tier in full: model, who pays, archived or not; and optionally whether it is the default. */
export class SetModelTier extends Schema.TaggedClass<SetModelTier>()("SetModelTier", {
  ...Struct.omit(TierSet.fields, "_tag", "setAt"),
  archived: Schema.Boolean,
  /** true: make it the default tier; false: it stops being the default if it is; null: unchanged. */
  makeDefault: Schema.NullOr(Schema.Boolean)
}) {}

export class SetModelKey extends Schema.TaggedClass<SetModelKey>()("SetModelKey", Struct.omit(ModelKeySet.fields, "_tag", "setAt")) {}

export class ClearModelKey extends Schema.TaggedClass<ClearModelKey>()("ClearModelKey", {
  orgId: Schema.NonEmptyString,
  family: KeyFamily
}) {}

export const ModelsCommand = Schema.Union(SetModelTier, SetModelKey, ClearModelKey)
export type ModelsCommand = typeof ModelsCommand.Type
