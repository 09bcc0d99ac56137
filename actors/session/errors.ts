/** Rejections of the session actor. */
import { Schema } from "effect"

export class SessionAlreadyExists extends Schema.TaggedError<SessionAlreadyExists>()("SessionAlreadyExists", {
  sessionId: Schema.String
}) {
  override get message() {
    return `session ${this.sessionId} already exists`
  }
}

export class SessionNotFound extends Schema.TaggedError<SessionNotFound>()("SessionNotFound", {
  sessionId: Schema.String
}) {
  override get message() {
    return `session ${this.sessionId} does not exist`
  }
}

export const SessionError = Schema.Union(SessionAlreadyExists, SessionNotFound)
export type SessionError = typeof SessionError.Type
