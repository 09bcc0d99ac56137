/** Events of the claim actor (key `claim:<namespace>:<value>`): one unique name (an email
 * address, an organization slug) held by one owner. Uniqueness across actors lives here, because
 * a read model cannot refuse a duplicate without jamming its partition. An `Idempotency-Key`'s
 * name is its seed (caller, capability and key hashed) and its owner the digest of the request
 * first sent under it (src/checkpoint/IdempotencyKeys.ts). */
import { Schema } from "effect"

export const ClaimNamespace = Schema.Literal("email", "idempotency_key")

export class Claimed extends Schema.TaggedClass<Claimed>()("claim.made", {
  namespace: ClaimNamespace,
  value: Schema.NonEmptyString,
  ownerId: Schema.NonEmptyString,
  claimedAt: Schema.String
}) {}

export const ClaimEvent = Claimed
export type ClaimEvent = Claimed
