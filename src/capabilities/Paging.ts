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
