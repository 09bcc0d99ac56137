/** The user actor, key `user:<userId>`: a person's account. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { UserError } from "./errors.ts"
import { UserEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { UserCommand } from "./protocol.ts"
import { initialUserState, UserState } from "./state.ts"

export const UserActor: ActorKind<UserState, UserCommand, UserEvent, UserError> = {
  kind: "user",
  initialState: initialUserState,
  state: UserState,
  commands: UserCommand,
  events: UserEvent,
  errors: UserError,
  decide,
  evolve,
  project
}
