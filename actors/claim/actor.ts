/** The claim actor, key `claim:<namespace>:<value>`: the first owner to claim a name keeps it;
 * the same owner claiming again changes nothing. */
import { Either } from "effect"
import type { ActorKind } from "../kernel.ts"
import { ClaimError, NameTaken } from "./errors.ts"
import { ClaimEvent, Claimed } from "./events.ts"
import { ClaimCommand } from "./protocol.ts"
import { ClaimState, initialClaimState } from "./state.ts"

export const ClaimActor: ActorKind<ClaimState, ClaimCommand, ClaimEvent, ClaimError> = {
  kind: "claim",
  initialState: initialClaimState,
  state: ClaimState,
  commands: ClaimCommand,
  events: ClaimEvent,
  errors: ClaimError,
  decide: (state, command, meta) => {
    const { namespace, value, ownerId } = command
    if (state._tag === "Free") return Either.right([new Claimed({ namespace, value, ownerId, claimedAt: meta.at })])
    return state.ownerId === ownerId ? Either.right([]) : Either.left(new NameTaken({ namespace, value }))
  },
  evolve: (_state, event) => ({ _tag: "Held", ownerId: event.ownerId }),
  project: (_after, event) => [
    {
      op: "upsert",
      table: "claims",
      pk: ["namespace", "value"],
      row: { namespace: event.namespace, value: event.value, owner_id: event.ownerId, claimed_at: event.claimedAt }
    }
  ]
}
