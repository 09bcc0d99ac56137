/** Commands of an automation run (`automation_run:<runId>`), sent by its driver (and a person's
 * answer to a `human_input` step or decision on a call parked for approval). Each names the step
 * and the attempt it is about, so that a driver that lost its partition cannot record over the one
 * that took over. */
import { Schema } from "effect"
import { RunAs, RunTrigger, Step } from "../automation/definition.ts"
import { Json } from "../kernel.ts"
import { StepError } from "./state.ts"

const step = { runId: Schema.NonEmptyString, index: Schema.Int, attempt: Schema.Int }

/** Sent once the automation admitted the run; the run id derives from what fired it. */
export class CreateRun extends Schema.TaggedClass<CreateRun>()("CreateRun", {
  runId: Schema.NonEmptyString,
  automationId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  trigger: RunTrigger,
  steps: Schema.Array(Step),
  runAs: RunAs
}) {}

export class BeginStep extends Schema.TaggedClass<BeginStep>()("BeginStep", step) {}

export class CompleteStep extends Schema.TaggedClass<CompleteStep>()("CompleteStep", {
  ...step,
  output: Json,
  /** The step to run next (a later one), or null: the run is done. */
  next: Schema.NullOr(Schema.Int)
}) {}

export class FailStep extends Schema.TaggedClass<FailStep>()("FailStep", {
  ...step,
  error: StepError,
  /** No attempt follows: the run fails with this error. */
  final: Schema.Boolean
}) {}

export class AwaitInput extends Schema.TaggedClass<AwaitInput>()("AwaitInput", {
  ...step,
  prompt: Schema.String,
  assignee: Schema.String,
  expiresAt: Schema.String
}) {}

/** A tool step's call that needs approval, parked until `expiresAt`. */
export class AwaitApproval extends Schema.TaggedClass<AwaitApproval>()("AwaitApproval", {
  ...step,
  capability: Schema.String,
  input: Json,
  approver: Schema.String,
  expiresAt: Schema.String
}) {}

/** The approver's decision on the call the run waits for. */
export class ResolveStepApproval extends Schema.TaggedClass<ResolveStepApproval>()("ResolveStepApproval", {
  runId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  decision: Schema.Literal("approved", "denied"),
  note: Schema.NullOr(Schema.String),
  userId: Schema.NonEmptyString
}) {}

/** A person's answer to the step waiting for it. */
export class ProvideInput extends Schema.TaggedClass<ProvideInput>()("ProvideInput", {
  runId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  response: Json,
  respondent: Schema.String
}) {}

export const AutomationRunCommand = Schema.Union(CreateRun, BeginStep, CompleteStep, FailStep, AwaitInput, ProvideInput, AwaitApproval, ResolveStepApproval)
export type AutomationRunCommand = typeof AutomationRunCommand.Type
