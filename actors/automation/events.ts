/** Events of an automation; `_tag` is the published type and is never renamed. */
import { Schema } from "effect"
import { Origin, RunAs } from "./definition.ts"
import { definition, target } from "./protocol.ts"

/** The person a change was made by or for (a key's or a login's person); null: recorded before the
 * enable gate covered changes, when it was not (nobody is known to have enabled what followed). */
const by = Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null, exact: true })

export class AutomationCreated extends Schema.TaggedClass<AutomationCreated>()("automation.created", {
  ...target,
  orgId: Schema.NonEmptyString,
  ...definition,
  /** As the enable gate decided (spec 3.4), whatever was asked. */
  enabled: Schema.Boolean,
  origin: Origin,
  runAs: RunAs,
  at: Schema.String
}) {}

/** The definition after the change, whole. */
export class AutomationUpdated extends Schema.TaggedClass<AutomationUpdated>()("automation.updated", {
  ...target,
  ...definition,
  /** Whether the trigger was replaced (a live one goes live again from now). */
  triggerReplaced: Schema.Boolean,
  /** Where the change came from; `human` for changes recorded before it was (their `by` is null). */
  origin: Schema.optionalWith(Origin, { default: () => "human" as const, exact: true }),
  by,
  at: Schema.String
}) {}

/** A person enabled it: the current revision's runs act as them (`by`). */
export class AutomationEnabled extends Schema.TaggedClass<AutomationEnabled>()("automation.enabled", { ...target, by, at: Schema.String }) {}

/** A change of an enabled automation's trigger or steps from an AI origin disabled it until a person
 * enables it again (spec 3.4, for changes as for creation); its owner is told. `by`: whom the
 * changing key, login or agent acted for. */
export class AutomationHeld extends Schema.TaggedClass<AutomationHeld>()("automation.held", {
  ...target,
  by: Schema.String,
  at: Schema.String
}) {}

export class AutomationDisabled extends Schema.TaggedClass<AutomationDisabled>()("automation.disabled", { ...target, at: Schema.String }) {}

export class AutomationDeleted extends Schema.TaggedClass<AutomationDeleted>()("automation.deleted", target) {}

export class RunAdmitted extends Schema.TaggedClass<RunAdmitted>()("automation.run_admitted", {
  ...target,
  runId: Schema.NonEmptyString,
  /** The schedule tick it runs for, if scheduled. */
  tick: Schema.NullOr(Schema.String)
}) {}

/** A tick that came while the previous scheduled run was still active (Temporal's default overlap policy). */
export class TickSkipped extends Schema.TaggedClass<TickSkipped>()("automation.tick_skipped", {
  ...target,
  runId: Schema.NonEmptyString,
  tick: Schema.String,
  activeRunId: Schema.NonEmptyString
}) {}

export class ScheduledRunEnded extends Schema.TaggedClass<ScheduledRunEnded>()("automation.scheduled_run_ended", {
  ...target,
  runId: Schema.NonEmptyString
}) {}

export const AutomationEvent = Schema.Union(
  AutomationCreated,
  AutomationUpdated,
  AutomationEnabled,
  AutomationDisabled,
  AutomationHeld,
  AutomationDeleted,
  RunAdmitted,
  TickSkipped,
  ScheduledRunEnded
)
export type AutomationEvent = typeof AutomationEvent.Type
