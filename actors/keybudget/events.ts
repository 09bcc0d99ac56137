/**
 * Events of the key budget actor (key `keybudget:<aky_ id>`): the slices of a key's turn budget
 * handed to nodes, window by window. A published `_tag` is never renamed.
 */
import { Schema } from "effect"

export class SliceTaken extends Schema.TaggedClass<SliceTaken>()("keybudget.slice_taken", {
  /** ISO 8601: the window the slice belongs to, from its first slice to its end. */
  windowStart: Schema.String,
  windowEnd: Schema.String,
  /** Turns this slice lets its node start before the window ends. */
  tokens: Schema.Int.pipe(Schema.positive()),
  /** Turns handed out in the window, this slice included. */
  granted: Schema.Int.pipe(Schema.positive())
}) {}

export const KeyBudgetEvent = SliceTaken
export type KeyBudgetEvent = SliceTaken
