/** Commands of an automation (`automation:<automationId>`). Checks that need the registry or the
 * read models (labels, conditions, step configs, agents) are made before a command is sent. */
import { Schema } from "effect"
import { Origin, RunAs, RunTrigger, Step, Trigger } from "./definition.ts"

export const target = { automationId: Schema.NonEmptyString, workspaceId: Schema.NonEmptyString }

/** What an automation is defined by: a creation sets it, an update's event carries it whole, and the
 * command and the event that record it share this list. */
export const definition = {
  name: Schema.String,
  description: Schema.String,
  trigger: Trigger,
  steps: Schema.Array(Step)
}

export class CreateAutomation extends Schema.TaggedClass<CreateAutomation>()("CreateAutomation", {
  ...target,
  orgId: Schema.NonEmptyString,
  ...definition,
  /** As the caller asked: absent means not asked. */
  enabled: Schema.optional(Schema.Boolean),
  origin: Origin,
  runAs: RunAs
}) {}

/** The person a command was sent by or for: a session's or login's person, a key's creator. */
const by = Schema.NonEmptyString

/** Replaces what is given; what is omitted stays. */
export class UpdateAutomation extends Schema.TaggedClass<UpdateAutomation>()("UpdateAutomation", {
  ...target,
  name: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  trigger: Schema.optional(Trigger),
  steps: Schema.optional(Schema.Array(Step)),
  origin: Origin,
  by
}) {}

export class EnableAutomation extends Schema.TaggedClass<EnableAutomation>()("EnableAutomation", { ...target, origin: Origin, by }) {}

export class DisableAutomation extends Schema.TaggedClass<DisableAutomation>()("DisableAutomation", target) {}

export class DeleteAutomation extends Schema.TaggedClass<DeleteAutomation>()("DeleteAutomation", target) {}

/** Asked by a run before it starts: the automation decides whether it may (the enable gate, the
 * schedule's overlap policy), so a disable acknowledged anywhere stops every later start. */
export class AdmitRun extends Schema.TaggedClass<AdmitRun>()("AdmitRun", {
  ...target,
  runId: Schema.NonEmptyString,
  trigger: RunTrigger
}) {}

/** A scheduled run ended: the next tick may run. */
export class EndScheduledRun extends Schema.TaggedClass<EndScheduledRun>()("EndScheduledRun", {
  ...target,
  runId: Schema.NonEmptyString
}) {}

export const AutomationCommand = Schema.Union(
  CreateAutomation,
  UpdateAutomation,
  EnableAutomation,
  DisableAutomation,
  DeleteAutomation,
  AdmitRun,
  EndScheduledRun
)
export type AutomationCommand = typeof AutomationCommand.Type
