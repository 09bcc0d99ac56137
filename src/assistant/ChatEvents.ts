/**
 * What a turn tells its sink, the SSE writer or the ask route's collector: the chat stream's events
 * and the turn result (their shapes are in src/platform/Wire.ts), or a failure. Deltas go straight
 * to the sink; the log gets the stream in a few large chunks (src/assistant/TurnStreamLog.ts).
 */
import type { ChatEvent, TurnResult } from "../platform/Wire.ts"
import type { Listener, Started } from "../platform/Relay.ts"
import { clipped } from "../platform/StorableText.ts"

/** A failure after the stream opened (7.2): one `error` event, then `done` with `[DONE]`. */
export interface TurnFailure {
  readonly code: string | null
  readonly reason: string | null
  readonly message: string
}

export type TurnOutcome = { readonly result: TurnResult } | { readonly failure: TurnFailure }

/** Where a turn's events go. `done` is called exactly once, last. */
export type TurnSink = Listener<ChatEvent, TurnOutcome>

/** A turn the chat capability started: the gateway frames its events. */
export type StartedTurn = Started<ChatEvent, TurnOutcome>

/** At most this many characters of a tool's input are shown in previews. */
const PREVIEW_CHARS = 200

export const previewOf = (input: unknown): string => clipped(JSON.stringify(input) ?? "", PREVIEW_CHARS)
