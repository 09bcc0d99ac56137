/** The session actor, key `session:<sessionId>`: one browser sign-in. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { SessionError } from "./errors.ts"
import { SessionEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { SessionCommand } from "./protocol.ts"
import { initialSessionState, SessionState } from "./state.ts"

export const SessionActor: ActorKind<SessionState, SessionCommand, SessionEvent, SessionError> = {
  kind: "session",
  initialState: initialSessionState,
  state: SessionState,
  commands: SessionCommand,
  events: SessionEvent,
  errors: SessionError,
  decide,
  evolve,
  project
}
