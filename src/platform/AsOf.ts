/**
 * `asOf` on the single-entity reads (docs/audit.md, "Reads as of a moment"): the entity folded from
 * its own events in the log up to an RFC 3339 time or a log position, answered in the live read's
 * shape; refused 400 for a moment before the entity existed or in the future.
 */
import { Effect, Schema } from "effect"
import { type FoldableKind, stateAsOf } from "../../streams/AsOf.ts"
import { parseUntil, type Until } from "../../streams/Replay.ts"
import { BadRequest } from "./Errors.ts"

/** A moment: an RFC 3339 time with its offset, or log positions `partition:offset,...` (as `Svc-Position` answers them). */
export const AsOf = Schema.String.pipe(
  Schema.filter((text) => parseUntil(text) !== undefined, { message: () => "asOf is an RFC 3339 time with its offset, or partition:offset pairs" }),
  Schema.annotations({
    description:
      "Read the entity as it stood at this moment: an RFC 3339 time with its offset (2026-11-24T10:00:00Z) or log positions partition:offset,... (as Svc-Position answers them)."
  })
)

/** The metadata field of A2A's tasks/get (0.3) and GetTask (1.0) that carries `asOf`. */
export const AS_OF_METADATA = "asOf"

const invalid = new BadRequest({ reason: "invalid_as_of", message: "asOf is an RFC 3339 time with its offset (2026-11-24T10:00:00Z), or partition:offset pairs" })

/** The moment `asOf` names; a 400 when it names none. */
export const momentOf = (asOf: unknown): Effect.Effect<Until, BadRequest> => {
  const until = typeof asOf === "string" ? parseUntil(asOf) : undefined
  return until === undefined ? Effect.fail(invalid) : Effect.succeed(until)
}

/**
 * The state of `what` (`id`, named `label` in refusals), and the rows its events project, at `asOf` (checked here: A2A passes it
 * from metadata unchecked), read at `now` (ISO 8601), when
 * it is the caller's (`belongs`, true of at least one of its states); `notFound` otherwise, as the
 * live read refuses it.
 */
export const readAsOf = <S, N>(
  what: FoldableKind<S>,
  id: string,
  label: string,
  asOf: unknown,
  now: string,
  belongs: (state: S) => boolean,
  notFound: () => N
) =>
  Effect.gen(function* () {
    const until = yield* momentOf(asOf)
    const read = yield* stateAsOf(what, id, until, Date.parse(now), belongs)
    switch (read._tag) {
      case "Future":
        return yield* new BadRequest({
          reason: "as_of_in_future",
          message: until._tag === "time"
            ? `asOf ${String(asOf)} is later than now (${now})`
            : `asOf ${String(asOf)} lies past the end of partition ${read.partition}, which holds ${label}'s events (its next offset is ${read.end})`
        })
      case "Unknown":
        return yield* Effect.fail(notFound())
      case "Before":
        return yield* new BadRequest({
          reason: "as_of_before_creation",
          message: until._tag === "time" || until.through.has(read.partition)
            ? `${label} did not exist yet at ${String(asOf)}`
            : `asOf ${String(asOf)} names no position of partition ${read.partition}, which holds ${label}'s events`
        })
      case "Folded":
        return { state: read.state, rows: read.rows }
    }
  })
