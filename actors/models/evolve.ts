import type { ModelsEvent } from "./events.ts"
import type { ModelsState } from "./state.ts"

// The decider archives and restores only tiers that exist; a log that says otherwise is corrupt.
const tierOf = (state: ModelsState, slug: string, tag: string) => {
  const tier = state.tiers[slug]
  if (tier === undefined) throw new Error(`${tag} for model tier ${slug}, which does not exist`)
  return tier
}

export const evolve = (state: ModelsState, event: ModelsEvent): ModelsState => {
  switch (event._tag) {
    case "model_tier.set": {
      const archived = state.tiers[event.slug]?.archived ?? false
      const tier = { model: event.model, sharedKey: event.sharedKey, archived, updatedAt: event.setAt }
      return { ...state, tiers: { ...state.tiers, [event.slug]: tier } }
    }
    case "model_tier.archived": {
      const tier = { ...tierOf(state, event.slug, event._tag), archived: true, updatedAt: event.archivedAt }
      return { ...state, tiers: { ...state.tiers, [event.slug]: tier } }
    }
    case "model_tier.restored": {
      const tier = { ...tierOf(state, event.slug, event._tag), archived: false, updatedAt: event.restoredAt }
      return { ...state, tiers: { ...state.tiers, [event.slug]: tier } }
    }
    case "model_default_tier.set":
      return { ...state, defaultTier: event.slug }
    case "model_key.set": {
      const { _tag, orgId: _orgId, family, ...key } = event
      return { ...state, keys: { ...state.keys, [family]: key } }
    }
    case "model_key.cleared": {
      const { [event.family]: _cleared, ...keys } = state.keys
      return { ...state, keys }
    }
  }
}
