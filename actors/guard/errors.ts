/** The guard actor's only rejection. */
import { Schema } from "effect"

/** A guess while locked: refused whether it is right or wrong, and not counted. */
export class AttemptsLocked extends Schema.TaggedError<AttemptsLocked>()("AttemptsLocked", {
  lockedUntil: Schema.String
}) {
  override get message() {
    return `too many failed attempts; locked until ${this.lockedUntil}`
  }
}

export const GuardError = AttemptsLocked
export type GuardError = AttemptsLocked
