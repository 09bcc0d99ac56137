/**
 * The log's hash chain (docs/audit.md): every event of a partition records the hash of the
 * partition's event before it (`prev`) and its own hash over its canonical encoding and `prev`.
 * Changing, removing or inserting one event changes every hash after it, so an event altered in
 * the log no longer matches its successor.
 *
 * Written for re-implementation: the encoding is JSON with keys sorted (RFC 8785's order, UTF-16
 * code units), no whitespace, numbers and strings as `JSON.stringify` writes them.
 */
import { hash } from "node:crypto"
import type { EventRecord } from "./EventLog.ts"

/** The `prev` of a partition's first event. */
export const GENESIS = "0".repeat(64)

/** Marks the encoding's version: a later encoding changes it, so old and new hashes never meet. */
const VERSION = "svc-log-chain-v1"

/**
 * JSON with every object's keys sorted: the same text however the payload was stored (`jsonb`
 * reorders keys). Written out by hand: a JavaScript object lists integer-like keys first in numeric
 * order, whatever order they were set in, so sorting an object's keys and stringifying it would not do.
 * What `JSON.stringify` leaves out (undefined, functions) it leaves out too; `toJSON` is applied.
 */
export const canonicalJson = (value: unknown): string => write(value) ?? "null"

const write = (input: unknown): string | undefined => {
  const value = input !== null && typeof input === "object" && typeof (input as { toJSON?: unknown }).toJSON === "function"
    ? (input as { toJSON: () => unknown }).toJSON()
    : input
  switch (typeof value) {
    case "string":
      return JSON.stringify(value)
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : "null"
    case "boolean":
      return value ? "true" : "false"
    case "object": {
      if (value === null) return "null"
      if (Array.isArray(value)) {
        let out = "["
        for (let i = 0; i < value.length; i++) out += (i === 0 ? "" : ",") + (write(value[i]) ?? "null")
        return out + "]"
      }
      const object = value as Record<string, unknown>
      let out = "{"
      let first = true
      for (const key of Object.keys(object).sort()) {
        const written = write(object[key])
        if (written === undefined) continue
        out += (first ? "" : ",") + JSON.stringify(key) + ":" + written
        first = false
      }
      return out + "}"
    }
    case "bigint":
      throw new TypeError("a bigint has no JSON encoding")
    default:
      return undefined
  }
}

/** The bytes an event's hash covers, as text: its fields in a fixed order after `prev`. */
export const encodeForHash = (prev: string, event: EventRecord): string =>
  canonicalJson([VERSION, prev, event.key, event.seq, event.firstSeq, event.type, event.at, event.commandId, event.actor, event.payload])

/** SHA-256 of the event's encoding, lowercase hex. */
export const hashOf = (prev: string, event: EventRecord): string => hash("sha256", encodeForHash(prev, event), "hex")

/** Chains `events` after `head`: each event's hash, and the new head (the last one's). */
export const chain = (head: string, events: ReadonlyArray<EventRecord>): { readonly hashes: ReadonlyArray<string>; readonly head: string } => {
  const hashes = new Array<string>(events.length)
  let prev = head
  for (let i = 0; i < events.length; i++) prev = hashes[i] = hashOf(prev, events[i])
  return { hashes, head: prev }
}
