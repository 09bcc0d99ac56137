/** An organization's tiers (live and archived), its default tier, and its keys by family. */
import { Schema } from "effect"
import { ModelKeySet, TierSet } from "./events.ts"

const Tier = Schema.Struct({
  model: TierSet.fields.model,
  sharedKey: Schema.Boolean,
  archived: Schema.Boolean,
  /** ISO 8601 of the last change. */
  updatedAt: Schema.String
})

const { _tag, orgId: _orgId, family: _family, ...keyFields } = ModelKeySet.fields
const Key = Schema.Struct(keyFields)

export const ModelsState = Schema.Struct({
  /** slug -> tier */
  tiers: Schema.Record({ key: Schema.String, value: Tier }),
  /** A slug of `tiers`, never an archived one; null: the operator's default tier. */
  defaultTier: Schema.NullOr(Schema.String),
  /** family -> key */
  keys: Schema.Struct({ openai: Schema.optional(Key), anthropic: Schema.optional(Key) })
})
export type ModelsState = typeof ModelsState.Type

export const initialModelsState: ModelsState = { tiers: {}, defaultTier: null, keys: {} }
