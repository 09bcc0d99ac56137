/** Keyset paging shared by listing capabilities: a page size and an opaque cursor. */
import { Effect, Schema } from "effect"
import { BadRequest } from "../Errors.ts"

/** `limit` of a page: 1 to 200. */
export const PageLimit = Schema.Int.pipe(Schema.between(1, 200))

export const DEFAULT_PAGE_LIMIT = 50

/** The position a cursor encodes, or a 400 when it is not one the route returned. */
export const decodeCursor = <A>(cursor: Schema.Schema<A, string>, value: string | undefined) =>
  value === undefined
    ? Effect.succeed(undefined)
    : Schema.decodeUnknown(cursor)(value).pipe(
        Effect.mapError(() => new BadRequest({ reason: "invalid_cursor", message: "cursor is not one this route returned" }))
      )

/** A position in a list ordered newest first by a time, then an id: the base64url of the last
 * entry's ISO 8601 time and id. */
export const TimeIdCursor = Schema.compose(Schema.StringFromBase64Url, Schema.parseJson(Schema.Tuple(Schema.String, Schema.String)))

/** A page of `rows` read with `limit + 1`, and the cursor after its last entry when more follow. */
export const timeIdPage = <R>(rows: ReadonlyArray<R>, limit: number, positionOf: (last: R) => readonly [Date, string]) => {
  const page = rows.slice(0, limit)
  if (rows.length <= limit) return { page, nextCursor: null }
  const [at, id] = positionOf(page[page.length - 1])
  return { page, nextCursor: Schema.encodeSync(TimeIdCursor)([at.toISOString(), id]) }
}
