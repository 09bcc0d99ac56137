/** A machine is absent until enrolled; then it belongs to one workspace for good. */
import { Schema } from "effect"

export const EnrolledMachine = Schema.TaggedStruct("enrolled", {
  machineId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  keyId: Schema.NonEmptyString,
  enrolledAt: Schema.String,
  /** The time of its latest recorded call. */
  lastSeenAt: Schema.String,
  /** Counts of what it recorded, for the `machines` row. */
  eventsIngested: Schema.NonNegativeInt,
  memories: Schema.NonNegativeInt,
  workOrdersClaimed: Schema.NonNegativeInt,
  codegraphBuilds: Schema.NonNegativeInt,
  certificateRenewals: Schema.NonNegativeInt,
  /** Queued commands not acknowledged yet, oldest first. */
  pendingCommands: Schema.Array(Schema.String)
})
export type EnrolledMachine = typeof EnrolledMachine.Type

export const MachineState = Schema.Union(Schema.TaggedStruct("absent", {}), EnrolledMachine)
export type MachineState = typeof MachineState.Type

export const initialState: MachineState = { _tag: "absent" }
