import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { ModelTierArchived, type ModelsError } from "./errors.ts"
import { DefaultTierSet, ModelKeyCleared, ModelKeySet, type ModelsEvent, TierArchived, TierRestored, TierSet } from "./events.ts"
import type { ModelsCommand, SetModelTier } from "./protocol.ts"
import type { ModelsState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<ModelsEvent>, ModelsError>

export const decide = (state: ModelsState, command: ModelsCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "SetModelTier":
      return setTier(state, command, meta)
    case "SetModelKey": {
      // a fresh seal of the same key differs byte for byte, so every set is recorded; a retried
      // command is still decided once (its command id)
      const { _tag, ...fields } = command
      return Either.right([new ModelKeySet({ ...fields, setAt: meta.at })])
    }
    case "ClearModelKey":
      return Either.right(
        state.keys[command.family] === undefined ? [] : [new ModelKeyCleared({ orgId: command.orgId, family: command.family, clearedAt: meta.at })]
      )
  }
}

/** Only what differs from the tier as it stands is recorded, so setting a tier again changes nothing. */
const setTier = (state: ModelsState, command: SetModelTier, meta: CommandMeta): Decision => {
  const { orgId, slug, model, sharedKey, archived, makeDefault } = command
  if (archived && makeDefault === true) return Either.left(new ModelTierArchived({ slug }))
  const current = state.tiers[slug]
  const events: Array<ModelsEvent> = []
  if (current === undefined || current.model !== model || current.sharedKey !== sharedKey) {
    events.push(new TierSet({ orgId, slug, model, sharedKey, setAt: meta.at }))
  }
  const wasArchived = current?.archived ?? false
  if (archived && !wasArchived) events.push(new TierArchived({ orgId, slug, archivedAt: meta.at }))
  if (!archived && wasArchived) events.push(new TierRestored({ orgId, slug, restoredAt: meta.at }))
  const isDefault = state.defaultTier === slug
  if (makeDefault === true && !isDefault) events.push(new DefaultTierSet({ orgId, slug, setAt: meta.at }))
  // a default no turn could run on would refuse every turn that names no tier: archiving the
  // default tier hands the default back to the operator's
  if ((makeDefault === false || archived) && isDefault) events.push(new DefaultTierSet({ orgId, slug: null, setAt: meta.at }))
  return Either.right(events)
}
