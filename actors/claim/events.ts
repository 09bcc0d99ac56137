/** Events of the claim actor (key `claim:<namespace>:<value>`): one unique name (an email
 * address, an organization slug) held by one owner. Uniqueness across actors lives here, because
 * a read model cannot refuse a duplicate without jamming its partition. */
import { Schema } from "effect"

export const ClaimNamespace = Schema.Literal("email")

export class Claimed extends Schema.TaggedClass<Claimed>()("claim.made", {
  namespace: ClaimNamespace,
  value: Schema.NonEmptyString,
  ownerId: Schema.NonEmptyString,
  claimedAt: Schema.String
}) {}

export const ClaimEvent = Claimed
export type ClaimEvent = Claimed
