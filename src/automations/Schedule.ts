/**
 * Schedule triggers (spec 2.8): POSIX cron, five fields, read in an IANA time zone, with croner.
 * Pure: the scheduler passes the times in.
 */
import { Cron } from "croner"
import { createHash } from "node:crypto"
import { Either, Schema } from "effect"
import { BadRequest } from "../platform/Errors.ts"

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

/**
 * A workspace holds as many enabled schedules as its fair share allows (`ENABLED_SCHEDULES_PER_WORKSPACE`):
 * enabling one more, or giving an enabled automation a schedule, is 409 `schedule_limit_reached`.
 */
export class ScheduleLimitReached extends Schema.TaggedError<ScheduleLimitReached>()("ScheduleLimitReached", {
  limit: Schema.Int
}) {
  override get message() {
    return `this workspace has ${this.limit} enabled schedules, as many as it may; disable one first`
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

const MINUTE_MS = 60_000

/**
 * How long after its time an automation's tick fires: a stable share of the minute (0 to 59.999 s)
 * from a hash of its id, so that a workspace's hundreds of every-minute schedules do not all fire at
 * second 0 (docs/decisions.md, "Schedules fire spread over their minute"). The tick itself, and the
 * run it names, stay on the minute.
 */
export const fireOffsetMs = (automationId: string): number => createHash("sha256").update(automationId).digest().readUInt32BE(0) % MINUTE_MS

/**
 * The tick to fire now, if any: the latest occurrence after `after` whose firing (`offsetMs` after
 * it) is at or before `now`. Ticks missed while no node ran the schedule collapse into this one: at
 * most one catch-up run.
 */
export const dueTick = (expression: string, timezone: string, after: Date, now: Date, offsetMs = 0): Date | undefined => {
  const cron = cronOf(expression, timezone)
  const [latest] = cron.previousRuns(1, new Date(now.getTime() - offsetMs + 1))
  return latest !== undefined && latest.getTime() > after.getTime() ? latest : undefined
}

/** When the first tick after `after` that is not due at `now` fires (its time plus `offsetMs`), in epoch ms. */
export const nextFiring = (expression: string, timezone: string, after: Date, now: Date, offsetMs: number): number | undefined => {
  const next = nextTick(expression, timezone, new Date(Math.max(now.getTime() - offsetMs, after.getTime())))
  return next === undefined ? undefined : next.getTime() + offsetMs
}

/** The first occurrence after `after`. */
export const nextTick = (expression: string, timezone: string, after: Date): Date | undefined =>
  cronOf(expression, timezone).nextRun(after) ?? undefined
