import { Schema } from "effect"

export const ClaimState = Schema.Union(
  Schema.TaggedStruct("Free", {}),
  Schema.TaggedStruct("Held", { ownerId: Schema.String })
)
export type ClaimState = typeof ClaimState.Type

export const initialClaimState: ClaimState = { _tag: "Free" }
