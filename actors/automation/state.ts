import { Schema } from "effect"
import { Origin, RunAs, Step, Trigger } from "./definition.ts"

export const LiveAutomation = Schema.TaggedStruct("Live", {
  automationId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  name: Schema.String,
  description: Schema.String,
  trigger: Trigger,
  steps: Schema.Array(Step),
  enabled: Schema.Boolean,
  /** When the trigger last went live (enabled, or replaced while enabled): nothing that fired before runs. */
  liveSince: Schema.NullOr(Schema.String),
  origin: Origin,
  runAs: RunAs,
  createdAt: Schema.String,
  updatedAt: Schema.String,
  /** 1 on creation, +1 per change of its definition or enablement. */
  version: Schema.Int,
  /** The last schedule tick decided (run or skipped). */
  lastTick: Schema.NullOr(Schema.String),
  /** The scheduled run still active, if any: a tick meanwhile is skipped. */
  activeScheduledRun: Schema.NullOr(Schema.String)
})
export type LiveAutomation = typeof LiveAutomation.Type

export const AutomationState = Schema.Union(
  Schema.TaggedStruct("Absent", {}),
  LiveAutomation,
  Schema.TaggedStruct("Deleted", { automationId: Schema.String, workspaceId: Schema.String })
)
export type AutomationState = typeof AutomationState.Type

export const initialAutomationState: AutomationState = { _tag: "Absent" }
