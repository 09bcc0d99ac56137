/**
 * Text a read model can hold: Postgres stores neither a NUL character nor, in JSON, a UTF-16
 * surrogate without its pair. Inputs that end up stored refuse them as bad input (400, -32602)
 * rather than fail later at the database.
 */
import { Schema } from "effect"

const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

export const StorableString = Schema.String.pipe(
  Schema.filter((text) => !UNSTORABLE.test(text), { message: () => "text must not contain a NUL character or an unpaired surrogate" })
)
