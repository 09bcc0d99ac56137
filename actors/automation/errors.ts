/** Rejections of automation commands, with the HTTP status, code and reason each maps to. */
import { Schema } from "effect"

/** 404 `not_found`, reason `automation_not_found`: none, deleted, or in another workspace. */
export class AutomationNotFound extends Schema.TaggedError<AutomationNotFound>()("AutomationNotFound", {
  automationId: Schema.String
}) {}

/** 409 `conflict`, reason `automation_exists`. */
export class AutomationExists extends Schema.TaggedError<AutomationExists>()("AutomationExists", {
  automationId: Schema.String
}) {}

/** 403 `forbidden`, reason `human_required`: only a person acting directly may enable (spec 3.4). */
export class HumanRequired extends Schema.TaggedError<HumanRequired>()("HumanRequired", {
  automationId: Schema.String
}) {}

/** 409 `conflict`, reason `automation_disabled`: a run of a disabled automation does not start. */
export class AutomationIsDisabled extends Schema.TaggedError<AutomationIsDisabled>()("AutomationIsDisabled", {
  automationId: Schema.String
}) {}

/** 409 `conflict`, reason `trigger_mismatch`: the run's trigger is not the automation's (an API
 * trigger of an event automation, a tick of a replaced schedule). */
export class TriggerMismatch extends Schema.TaggedError<TriggerMismatch>()("TriggerMismatch", {
  automationId: Schema.String,
  expected: Schema.String,
  got: Schema.String
}) {}

/** 409 `conflict`, reason `tick_already_decided`: a tick at or before the last one decided. */
export class TickAlreadyDecided extends Schema.TaggedError<TickAlreadyDecided>()("TickAlreadyDecided", {
  automationId: Schema.String,
  tick: Schema.String
}) {}

export const AutomationError = Schema.Union(AutomationNotFound, AutomationExists, HumanRequired, AutomationIsDisabled, TriggerMismatch, TickAlreadyDecided)
export type AutomationError = typeof AutomationError.Type
