/**
 * Text a read model can hold: Postgres stores neither a NUL character nor, in JSON, a UTF-16
 * surrogate without its pair. Inputs that end up stored refuse them as bad input (400, -32602)
 * rather than fail later at the database.
 */
import { Schema } from "effect"
import type { Json } from "../../actors/kernel.ts"
import { MAX_JSON_DEPTH } from "./JsonDepth.ts"

const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const isStorable = (text: string) => !UNSTORABLE.test(text)

export const StorableString = Schema.String.pipe(
  Schema.filter(isStorable, { message: () => "text must not contain a NUL character or an unpaired surrogate" })
)

/** A parsed JSON value whose every string, its keys included, is storable, and which nests at most MAX_JSON_DEPTH deep. */
const isStorableJson = (value: unknown): value is Json => {
  const pending: Array<{ readonly value: unknown; readonly depth: number }> = [{ value, depth: 0 }]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, depth } = next
    if (typeof value === "string" && !isStorable(value)) return false
    if (typeof value !== "object" || value === null) continue
    if (depth >= MAX_JSON_DEPTH) return false
    for (const [key, inner] of Object.entries(value)) {
      if (!isStorable(key)) return false
      pending.push({ value: inner, depth: depth + 1 })
    }
  }
  return true
}

/** A JSON object a read model can hold (an A2A data part's `data`). */
export const StorableJsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(
  Schema.filter((data): data is { readonly [key: string]: Json } => isStorableJson(data), {
    message: () => `data must nest at most ${MAX_JSON_DEPTH} levels and hold no NUL character or unpaired surrogate`
  })
)

/** `text` cut to at most `max` characters, the last of them `…` when it was cut; never between
 * the two halves of a surrogate pair, so what is cut stays storable. */
export const clipped = (text: string, max: number): string => {
  if (text.length <= max) return text
  const cut = text.slice(0, max - 1)
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`
}
