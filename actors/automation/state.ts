import { Schema } from "effect"
import { Origin, RunAs, Step, Trigger } from "./definition.ts"

const live = Schema.TaggedStruct("Live", {
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
  /** Where its current trigger and steps came from: its creation, or the latest change of them. */
  origin: Origin,
  /** Its owner: whom the creator was or stood for (told when a change disables it). */
  runAs: RunAs,
  createdAt: Schema.String,
  updatedAt: Schema.String,
  /** 1 on creation, +1 per change of its definition or enablement. */
  version: Schema.Int,
  /** 1 on creation, +1 per change of its trigger or steps (what runs). */
  revision: Schema.Int,
  /** The person who enabled the current revision, whose rights its runs act with; null while disabled. */
  enabledBy: Schema.NullOr(Schema.String),
  /** The revision that person enabled; a run starts only while it is the current one. */
  enabledRevision: Schema.NullOr(Schema.Int),
  /** The last schedule tick decided (run or skipped). */
  lastTick: Schema.NullOr(Schema.String),
  /** The scheduled run still active, if any: a tick meanwhile is skipped. */
  activeScheduledRun: Schema.NullOr(Schema.String)
})

/**
 * A state stored before the enable gate covered changes names no revision or enabler. Enabled at
 * its creation and never changed since (version 1), it was enabled by its owner's session; otherwise
 * nobody is known to have enabled what it now is, and it runs again once a person enables it. The
 * same as replaying its events gives (evolve), so both ways to a state agree.
 */
export const LiveAutomation = Schema.transform(
  Schema.Struct({
    ...live.fields,
    revision: Schema.optional(Schema.Int),
    enabledBy: Schema.optional(Schema.NullOr(Schema.String)),
    enabledRevision: Schema.optional(Schema.NullOr(Schema.Int))
  }),
  Schema.typeSchema(live),
  {
    strict: true,
    decode: ({ revision, enabledBy, enabledRevision, ...stored }) => {
      if (revision !== undefined) return { ...stored, revision, enabledBy: enabledBy ?? null, enabledRevision: enabledRevision ?? null }
      const owners = stored.enabled && stored.version === 1
      return { ...stored, revision: 1, enabledBy: owners ? stored.runAs.userId : null, enabledRevision: owners ? 1 : null }
    },
    encode: (state) => state
  }
)
export type LiveAutomation = typeof LiveAutomation.Type

/** Whom a run may act for now: the person who enabled the current revision; null, none may start. */
export const enablerOf = (automation: LiveAutomation): string | null =>
  automation.enabled && automation.enabledRevision === automation.revision ? automation.enabledBy : null

export const AutomationState = Schema.Union(
  Schema.TaggedStruct("Absent", {}),
  LiveAutomation,
  Schema.TaggedStruct("Deleted", { automationId: Schema.String, workspaceId: Schema.String })
)
export type AutomationState = typeof AutomationState.Type

export const initialAutomationState: AutomationState = { _tag: "Absent" }
