import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { SessionAlreadyExists, SessionNotFound, type SessionError } from "./errors.ts"
import { SessionEnded, SessionStarted, type SessionEvent } from "./events.ts"
import type { SessionCommand } from "./protocol.ts"
import type { SessionState } from "./state.ts"

export const decide = (state: SessionState, command: SessionCommand, meta: CommandMeta): Either.Either<ReadonlyArray<SessionEvent>, SessionError> => {
  switch (command._tag) {
    case "StartSession": {
      if (state._tag !== "Absent") return Either.left(new SessionAlreadyExists({ sessionId: command.sessionId }))
      const { _tag, ...fields } = command
      return Either.right([new SessionStarted({ ...fields, startedAt: meta.at })])
    }
    case "EndSession":
      // signing out twice records one sign-out
      if (state._tag === "Absent") return Either.left(new SessionNotFound({ sessionId: command.sessionId }))
      return Either.right(state._tag === "Active" ? [new SessionEnded({ sessionId: command.sessionId, endedAt: meta.at })] : [])
  }
}
