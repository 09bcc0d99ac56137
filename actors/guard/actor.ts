/** The guard actor, key `guard:<flow>:<scope>:<subject>`: the failed guesses of one account or one
 * client address at one kind of secret, and the lock they cause. Its single writer makes the count
 * exact across a cluster: every node's failures and successes for the key are decided in order. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { GuardError } from "./errors.ts"
import { GuardEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { GuardCommand } from "./protocol.ts"
import { GuardState, initialGuardState } from "./state.ts"

export const GuardActor: ActorKind<GuardState, GuardCommand, GuardEvent, GuardError> = {
  kind: "guard",
  initialState: initialGuardState,
  state: GuardState,
  commands: GuardCommand,
  events: GuardEvent,
  errors: GuardError,
  decide,
  evolve,
  project
}
