/** The billing actor, key `billing:<orgId>`: an organization's credits, suspension, spend caps and
 * workspace budgets, and the metered turns that spend against them. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { BillingError } from "./errors.ts"
import { BillingEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { BillingCommand } from "./protocol.ts"
import { BillingState, initialBillingState } from "./state.ts"

export const BillingActor: ActorKind<BillingState, BillingCommand, BillingEvent, BillingError> = {
  kind: "billing",
  initialState: initialBillingState,
  state: BillingState,
  commands: BillingCommand,
  events: BillingEvent,
  errors: BillingError,
  decide,
  evolve,
  project
}
