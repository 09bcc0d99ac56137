/** Commands of the session actor. The application checks the password (and second factor) and
 * mints the cookie before starting a session. */
import { Schema, Struct } from "effect"
import { SessionStarted } from "./events.ts"

export class StartSession extends Schema.TaggedClass<StartSession>()(
  "StartSession",
  Struct.omit(SessionStarted.fields, "_tag", "startedAt")
) {}

export class EndSession extends Schema.TaggedClass<EndSession>()("EndSession", {
  sessionId: Schema.NonEmptyString
}) {}

export const SessionCommand = Schema.Union(StartSession, EndSession)
export type SessionCommand = typeof SessionCommand.Type
