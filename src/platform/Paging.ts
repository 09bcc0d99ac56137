/** Keyset paging shared by listing capabilities: a page size and an opaque cursor. */
import { Effect, Schema } from "effect"
import { BadRequest } from "./Errors.ts"

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

/** A position in a list ordered by an id: the base64url of the last entry's id. */
export const idCursor = <A>(id: Schema.Schema<A, string>) => Schema.compose(Schema.StringFromBase64Url, id)

/** A position in a list ordered newest first by a time, then an id: the base64url of the last
 * entry's ISO 8601 time and id. */
export const TimeIdCursor = Schema.compose(Schema.StringFromBase64Url, Schema.parseJson(Schema.Tuple(Schema.String, Schema.String)))

/** The position `TimeIdCursor` holds for an entry at `at` with id `id`. */
export const timeId = (at: Date, id: string): readonly [string, string] => [at.toISOString(), id]

/** A page of `rows` read with `limit + 1`, and the cursor after its last entry when more follow. */
export const pageOf = <R, P>(rows: ReadonlyArray<R>, limit: number, cursor: Schema.Schema<P, string>, positionOf: (last: R) => P) => {
  const page = rows.slice(0, limit)
  return { page, nextCursor: rows.length > limit ? Schema.encodeSync(cursor)(positionOf(page[page.length - 1])) : null }
}

/** `pageOf` for a list ordered newest first by a time, then an id. */
export const timeIdPage = <R>(rows: ReadonlyArray<R>, limit: number, positionOf: (last: R) => readonly [Date, string]) =>
  pageOf(rows, limit, TimeIdCursor, (last) => timeId(...positionOf(last)))

/** A listing capability's page: `input.limit` rows (50 when absent) after `input.cursor` (a 400 when
 * it is not one this route returned). `read` is given the position to start after (none: the first
 * page) and how many rows to read, one more than the page to learn whether more follow; `positionOf`
 * gives the position of a row, which the next page's cursor holds. */
export const keysetPage = <P, Row, E, R>(
  cursor: Schema.Schema<P, string>,
  input: { readonly limit?: number | undefined; readonly cursor?: string | undefined },
  read: (after: P | undefined, rows: number) => Effect.Effect<ReadonlyArray<Row>, E, R>,
  positionOf: (last: Row) => P
) =>
  Effect.gen(function* () {
    const limit = input.limit ?? DEFAULT_PAGE_LIMIT
    const after = yield* decodeCursor(cursor, input.cursor)
    return pageOf(yield* read(after, limit + 1), limit, cursor, positionOf)
  })
