/** Events of an automation run: the playbook events of spec 6.3.2. `_tag` is never renamed. */
import { Schema } from "effect"
import { RunAs, RunTrigger, Step, StepType } from "../automation/definition.ts"
import { Json } from "../kernel.ts"
import { StepError } from "./state.ts"

const run = { runId: Schema.NonEmptyString }
const step = { ...run, index: Schema.Int, attempt: Schema.Int, at: Schema.String }

export class RunStarted extends Schema.TaggedClass<RunStarted>()("automation_run.started", {
  ...run,
  automationId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  trigger: RunTrigger,
  steps: Schema.Array(Step),
  runAs: RunAs,
  at: Schema.String
}) {}

export class StepStarted extends Schema.TaggedClass<StepStarted>()("automation_run.step_started", {
  ...step,
  name: Schema.String,
  stepType: StepType
}) {}

export class StepSucceeded extends Schema.TaggedClass<StepSucceeded>()("automation_run.step_succeeded", {
  ...step,
  output: Json,
  next: Schema.NullOr(Schema.Int)
}) {}

export class StepFailed extends Schema.TaggedClass<StepFailed>()("automation_run.step_failed", {
  ...step,
  error: StepError,
  final: Schema.Boolean
}) {}

export class InputRequested extends Schema.TaggedClass<InputRequested>()("automation_run.input_requested", {
  ...step,
  prompt: Schema.String,
  assignee: Schema.String,
  expiresAt: Schema.String
}) {}

export class InputReceived extends Schema.TaggedClass<InputReceived>()("automation_run.input_received", {
  ...step,
  response: Json,
  respondent: Schema.String
}) {}

export class ApprovalRequested extends Schema.TaggedClass<ApprovalRequested>()("automation_run.approval_requested", {
  ...step,
  capability: Schema.String,
  input: Json,
  approver: Schema.String,
  expiresAt: Schema.String
}) {}

/** The approver's answer; a denial is followed by the step's final failure in the same append. */
export class ApprovalResolved extends Schema.TaggedClass<ApprovalResolved>()("automation_run.approval_resolved", {
  ...step,
  decision: Schema.Literal("approved", "denied"),
  note: Schema.NullOr(Schema.String)
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
