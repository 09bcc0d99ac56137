/** A workspace's fleet settings: its policy bundle (version 0: none set yet) and its repositories. */
import { Schema } from "effect"
import { PolicyRule } from "./events.ts"

export const FleetState = Schema.Struct({
  policyVersion: Schema.NonNegativeInt,
  rules: Schema.Array(PolicyRule),
  repositories: Schema.Array(Schema.String)
})
export type FleetState = typeof FleetState.Type

export const initialState: FleetState = { policyVersion: 0, rules: [], repositories: [] }
