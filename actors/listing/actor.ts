/** An org listing (spec 2.9's allow-list entry), key `listing:<listingId>` (`porg_<32 hex>`, a digest
 * of the organization, plugin type and name), with its workspace installs (spec 3.5). */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { ListingError } from "./errors.ts"
import { ListingEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { ListingCommand } from "./protocol.ts"
import { initialListingState, ListingState } from "./state.ts"

export const ListingActor: ActorKind<ListingState, ListingCommand, ListingEvent, ListingError> = {
  kind: "listing",
  initialState: initialListingState,
  state: ListingState,
  commands: ListingCommand,
  events: ListingEvent,
  errors: ListingError,
  decide,
  evolve,
  project
}
