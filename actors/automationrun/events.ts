/** Events of an automation run: the playbook events of spec 6.3.2. `_tag` is never renamed. */
import { Schema } from "effect"
import { StepType } from "../automation/definition.ts"
import { ApprovalReceipt } from "../conversation/events.ts"
import { approvalDecision, inputGiven, stepFailure, stepSuccess } from "./protocol.ts"
import { approvalAsked, inputAsked, runStart, StepError } from "./state.ts"

const run = { runId: Schema.NonEmptyString }
const step = { ...run, index: Schema.Int, attempt: Schema.Int, at: Schema.String }

export class RunStarted extends Schema.TaggedClass<RunStarted>()("automation_run.started", { ...runStart, at: Schema.String }) {}

export class StepStarted extends Schema.TaggedClass<StepStarted>()("automation_run.step_started", {
  ...step,
  name: Schema.String,
  stepType: StepType
}) {}

export class StepSucceeded extends Schema.TaggedClass<StepSucceeded>()("automation_run.step_succeeded", {
  ...step,
  ...stepSuccess
}) {}

export class StepFailed extends Schema.TaggedClass<StepFailed>()("automation_run.step_failed", {
  ...step,
  ...stepFailure
}) {}

export class InputRequested extends Schema.TaggedClass<InputRequested>()("automation_run.input_requested", {
  ...step,
  ...inputAsked
}) {}

export class InputReceived extends Schema.TaggedClass<InputReceived>()("automation_run.input_received", {
  ...step,
  ...inputGiven
}) {}

export class ApprovalRequested extends Schema.TaggedClass<ApprovalRequested>()("automation_run.approval_requested", {
  ...step,
  ...approvalAsked
}) {}

/** The approver's answer; a denial is followed by the step's final failure in the same append. */
export class ApprovalResolved extends Schema.TaggedClass<ApprovalResolved>()("automation_run.approval_resolved", {
  ...step,
  ...approvalDecision,
  /** The run's organization, so that the audit export carries the decision; null in events recorded before receipts. */
  orgId: Schema.optionalWith(Schema.NullOr(Schema.NonEmptyString), { default: () => null, exact: true }),
  /** Null in events recorded before receipts. */
  receipt: Schema.optionalWith(Schema.NullOr(ApprovalReceipt), { default: () => null, exact: true })
}) {}

export class RunSucceeded extends Schema.TaggedClass<RunSucceeded>()("automation_run.succeeded", { ...run, at: Schema.String }) {}

export class RunFailed extends Schema.TaggedClass<RunFailed>()("automation_run.failed", {
  ...run,
  index: Schema.Int,
  error: StepError,
  at: Schema.String
}) {}

export const AutomationRunEvent = Schema.Union(
  RunStarted,
  StepStarted,
  StepSucceeded,
  StepFailed,
  InputRequested,
  InputReceived,
  ApprovalRequested,
  ApprovalResolved,
  RunSucceeded,
  RunFailed
)
export type AutomationRunEvent = typeof AutomationRunEvent.Type
