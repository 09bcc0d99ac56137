/**
 * Events of the models actor (key `models:<orgId>`): an organization's text model tiers, its
 * default tier, and the model provider keys it pays with. A key is sealed with the platform key
 * before it reaches a command, so no event carries a raw key; `keyHint` shows its last four
 * characters so an Owner can tell which key is set. A published `_tag` is never renamed.
 */
import { Schema } from "effect"

export const ModelTierSlug = Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9-]{0,62}$/))

/** Families an organization can hold a key for; the offline model needs none. */
export const KeyFamily = Schema.Literal("openai", "anthropic")
export type KeyFamily = typeof KeyFamily.Type

/** A tier was defined or redefined. It keeps its archived status; it is archived and restored apart. */
export class TierSet extends Schema.TaggedClass<TierSet>()("model_tier.set", {
  orgId: Schema.NonEmptyString,
  slug: ModelTierSlug,
  /** `<family>:<model>`; null: the tier is named but mapped to no model yet. */
  model: Schema.NullOr(Schema.NonEmptyString),
  /** True: the operator's key pays for the tier's turns; false: the organization's own key. */
  sharedKey: Schema.Boolean,
  /** ISO 8601. */
  setAt: Schema.String
}) {}

/** Turns may no longer run on the tier. */
export class TierArchived extends Schema.TaggedClass<TierArchived>()("model_tier.archived", {
  orgId: Schema.NonEmptyString,
  slug: ModelTierSlug,
  archivedAt: Schema.String
}) {}

export class TierRestored extends Schema.TaggedClass<TierRestored>()("model_tier.restored", {
  orgId: Schema.NonEmptyString,
  slug: ModelTierSlug,
  restoredAt: Schema.String
}) {}

/** The tier a turn naming none runs on; null: the operator's default tier. */
export class DefaultTierSet extends Schema.TaggedClass<DefaultTierSet>()("model_default_tier.set", {
  orgId: Schema.NonEmptyString,
  slug: Schema.NullOr(ModelTierSlug),
  setAt: Schema.String
}) {}

export class ModelKeySet extends Schema.TaggedClass<ModelKeySet>()("model_key.set", {
  orgId: Schema.NonEmptyString,
  family: KeyFamily,
  /** The key sealed with the platform key (`PlatformSecrets`). */
  apiKeySealed: Schema.NonEmptyString,
  /** The key's last four characters, or null for a key too short to show any of it. */
  keyHint: Schema.NullOr(Schema.String),
  /** The key's endpoint; null: the family's public API. */
  baseUrl: Schema.NullOr(Schema.String),
  /** The only models the key may run (model names of its family); null: any. */
  models: Schema.NullOr(Schema.Array(Schema.NonEmptyString)),
  setAt: Schema.String
}) {}

export class ModelKeyCleared extends Schema.TaggedClass<ModelKeyCleared>()("model_key.cleared", {
  orgId: Schema.NonEmptyString,
  family: KeyFamily,
  clearedAt: Schema.String
}) {}

export const ModelsEvent = Schema.Union(TierSet, TierArchived, TierRestored, DefaultTierSet, ModelKeySet, ModelKeyCleared)
export type ModelsEvent = typeof ModelsEvent.Type
