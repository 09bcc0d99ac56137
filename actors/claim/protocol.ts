import { Schema } from "effect"
import { ClaimNamespace } from "./events.ts"

export class Claim extends Schema.TaggedClass<Claim>()("Claim", {
  namespace: ClaimNamespace,
  value: Schema.NonEmptyString,
  ownerId: Schema.NonEmptyString
}) {}

export const ClaimCommand = Claim
export type ClaimCommand = Claim

/** The claim actor's id for a name. */
export const claimId = (namespace: typeof ClaimNamespace.Type, value: string) => `${namespace}:${value}`
