/** Read models (migration 0008): `model_tiers`, one row per tier with whether it is the default,
 * and `model_keys`, one row per family the organization holds a key for (sealed). */
import type { EventContext, RowOp } from "../kernel.ts"
import type { KeyFamily, ModelsEvent } from "./events.ts"
import type { ModelsState } from "./state.ts"

const tierRow = (after: ModelsState, orgId: string, slug: string): ReadonlyArray<RowOp> => {
  const tier = after.tiers[slug]
  if (tier === undefined) return []
  return [
    {
      op: "upsert",
      table: "model_tiers",
      pk: ["org_id", "slug"],
      row: {
        org_id: orgId,
        slug,
        model: tier.model,
        shared_key: tier.sharedKey,
        archived: tier.archived,
        is_default: after.defaultTier === slug,
        updated_at: tier.updatedAt
      }
    }
  ]
}

const keyRow = (after: ModelsState, orgId: string, family: KeyFamily): ReadonlyArray<RowOp> => {
  const key = after.keys[family]
  if (key === undefined) return [{ op: "delete", table: "model_keys", pk: ["org_id", "family"], row: { org_id: orgId, family } }]
  return [
    {
      op: "upsert",
      table: "model_keys",
      pk: ["org_id", "family"],
      row: {
        org_id: orgId,
        family,
        api_key_sealed: key.apiKeySealed,
        key_hint: key.keyHint,
        base_url: key.baseUrl,
        models: key.models,
        set_at: key.setAt
      }
    }
  ]
}

export const project = (after: ModelsState, event: ModelsEvent, _ctx: EventContext): ReadonlyArray<RowOp> => {
  switch (event._tag) {
    case "model_tier.set":
    case "model_tier.archived":
    case "model_tier.restored":
      return tierRow(after, event.orgId, event.slug)
    case "model_default_tier.set":
      // the state does not remember which tier was the default before, so every row is rewritten
      // (an organization has a handful of tiers)
      return Object.keys(after.tiers).flatMap((slug) => tierRow(after, event.orgId, slug))
    case "model_key.set":
    case "model_key.cleared":
      return keyRow(after, event.orgId, event.family)
  }
}
