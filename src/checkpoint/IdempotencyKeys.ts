/**
 * An `Idempotency-Key` stands for one request (docs/decisions.md, "`Idempotency-Key` header"): the
 * first request sent under it binds it, a retry of that request replays its result, and any other
 * request under it is refused before it runs. The binding is a claim (actors/claim) named by the
 * key's seed and owned by the request's digest, so it lives in the log and the actors' state like
 * every command: whichever node owns it, after a restart too.
 */
import { Effect } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { ClaimActor } from "../../actors/claim/actor.ts"
import { Claim, claimId } from "../../actors/claim/protocol.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { CurrentReadFence } from "../../streams/ReadFence.ts"
import { IdempotencyKeyReused, unavailableOf } from "../platform/Errors.ts"

/** Binds the key's seed to the request's digest, or fails with `IdempotencyKeyReused` when the
 * key was first sent with another request. Writes nothing when the request is the same again. */
export const bindIdempotencyKey = (seed: string, digest: string, meta: CommandMeta) =>
  Effect.flatMap(ActorHost, (host) =>
    host.send(
      ClaimActor,
      claimId("idempotency_key", seed),
      new Claim({ namespace: "idempotency_key", value: seed, ownerId: digest }),
      // a command id of its own: under the invocation's, a retry would be answered without deciding, whatever its digest
      { ...meta, commandId: randomUUID() }
    )
  ).pipe(
    Effect.asVoid,
    Effect.catchTags({
      NameTaken: () =>
        new IdempotencyKeyReused({ message: "this Idempotency-Key was first sent with another request (another body or place); send a new key for a new request" }),
      HostUnavailable: unavailableOf
    }),
    // the binding is no write of the call's own, so its reads need not wait to see it
    Effect.locally(CurrentReadFence, undefined)
  )

/**
 * A request's digest: SHA-256 over its value walked with object keys sorted, absent and undefined
 * fields alike, and bytes hashed as bytes. Given the input as the capability decoded it (encoded
 * back), bodies it cannot tell apart (keys in another order, other spacing, another multipart
 * boundary, a default spelled out) digest alike.
 */
export const requestDigest = (request: unknown): string => {
  const hash = createHash("sha256")
  const feed = (value: unknown): void => {
    // quoted and escaped: where a string ends is unambiguous, and lone surrogates stay distinct
    if (typeof value === "string") hash.update(JSON.stringify(value))
    else if (typeof value !== "object" || value === null) hash.update(`${value === null ? "null" : typeof value}:${String(value)};`)
    else if (ArrayBuffer.isView(value)) hash.update(`b${value.byteLength}:`).update(new Uint8Array(value.buffer, value.byteOffset, value.byteLength))
    else if (Array.isArray(value)) {
      hash.update(`a${value.length}[`)
      for (const item of value) feed(item)
      hash.update("]")
    } else {
      const entries = Object.entries(value).filter(([, field]) => field !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      hash.update(`o${entries.length}{`)
      for (const [key, field] of entries) {
        feed(key)
        feed(field)
      }
      hash.update("}")
    }
  }
  feed(request)
  return hash.digest("hex")
}
