/**
 * Personal fields (docs/audit.md, "Erasure by crypto-shredding"): per event type, the places of its
 * payload that hold a person's words. The shell seals each under that person's data key before the
 * command that causes the event is sent, so the log, the read models and exports hold only the
 * sealed form; erasing the person destroys the key. A place is a dotted path; `[]` steps into each
 * element of an array. Events not listed carry nothing sealed (docs/audit.md lists what is not yet).
 */
import type { Json } from "./kernel.ts"

export const personalFields: Readonly<Record<string, ReadonlyArray<string>>> = {
  /** The person's message, and the assistant's reply to them. */
  "message.saved": ["content"],
  /** The reply again, alone and inside the turn result. */
  "run.finished": ["reply", "result.reply"],
  /** Each chat event the turn streamed (text deltas, the final result): sealed whole, as JSON text. */
  "run.streamed": ["events[].event"],
  /** The turn's tape holds what the model was sent and answered, and the tools' results: sealed whole, as JSON text. */
  "run.taped": ["tape"],
  /** The summary is written from the messages. */
  "summary.rewritten": ["summary"]
}

/** The values at `path` in `value` (none where the path does not lead). */
export const valuesAt = (value: Json | undefined, path: string): ReadonlyArray<Json> => {
  if (value === undefined) return []
  if (path === "") return [value]
  const [step, ...rest] = path.split(".")
  const next = rest.join(".")
  const each = step.endsWith("[]")
  const name = each ? step.slice(0, -2) : step
  if (value === null || typeof value !== "object" || Array.isArray(value)) return []
  const member = (value as { readonly [k: string]: Json })[name]
  if (!each) return valuesAt(member, next)
  return Array.isArray(member) ? member.flatMap((element: Json) => valuesAt(element, next)) : []
}

/** The personal values of an event of type `type` with `payload`, as the log holds them. */
export const personalValues = (type: string, payload: Json): ReadonlyArray<Json> =>
  (personalFields[type] ?? []).flatMap((path) => valuesAt(payload, path))
