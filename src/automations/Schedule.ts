/**
 * Schedule triggers (spec 2.8): POSIX cron, five fields, read in an IANA time zone, with croner.
 * Pure: the scheduler passes the times in.
 */
import { Cron } from "croner"
import { Either } from "effect"
import { BadRequest } from "../Errors.ts"

const cronOf = (expression: string, timezone: string) => new Cron(expression, { paused: true, mode: "5-part", timezone })

/** Whether the zone is one the runtime knows (IANA names, and `UTC`). */
const knownZone = (timezone: string) => {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone })
    return true
  } catch {
    return false
  }
}

/** Checks an expression and zone as a caller gives them: 400 `invalid_cron` or `invalid_timezone`. */
export const checkSchedule = (expression: string, timezone: string): Either.Either<void, BadRequest> => {
  if (!knownZone(timezone)) return Either.left(new BadRequest({ reason: "invalid_timezone", message: `'${timezone}' is not an IANA time zone` }))
  try {
    const cron = cronOf(expression, timezone)
    if (cron.nextRun() === null) return Either.left(new BadRequest({ reason: "invalid_cron", message: `'${expression}' never fires` }))
    return Either.void
  } catch (error) {
    return Either.left(new BadRequest({ reason: "invalid_cron", message: `'${expression}' is not a five-field cron expression: ${(error as Error).message}` }))
  }
}

/**
 * The tick to fire now, if any: the latest occurrence after `after` and at or before `now`. Ticks
 * missed while no node ran the schedule collapse into this one: at most one catch-up run.
 */
export const dueTick = (expression: string, timezone: string, after: Date, now: Date): Date | undefined => {
  const cron = cronOf(expression, timezone)
  const [latest] = cron.previousRuns(1, new Date(now.getTime() + 1))
  return latest !== undefined && latest.getTime() > after.getTime() ? latest : undefined
}

/** The first occurrence after `after`. */
export const nextTick = (expression: string, timezone: string, after: Date): Date | undefined =>
  cronOf(expression, timezone).nextRun(after) ?? undefined
