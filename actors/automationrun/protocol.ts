/** Commands of an automation run (`automation_run:<runId>`), sent by its driver (and a person's
 * answer to a `human_input` step or decision on a call parked for approval). Each names the step
 * and the attempt it is about, so that a driver that lost its partition cannot record over the one
 * that took over. */
import { Schema } from "effect"
import { ApprovalReceipt } from "../conversation/events.ts"
import { Json } from "../kernel.ts"
import { approvalAsked, inputAsked, runStart, StepError } from "./state.ts"

const step = { runId: Schema.NonEmptyString, index: Schema.Int, attempt: Schema.Int }

/** What a step's end records; each command and its event share these lists. */
export const stepSuccess = {
  output: Json,
  /** The step to run next (a later one), or null: the run is done. */
  next: Schema.NullOr(Schema.Int)
}

export const stepFailure = {
  error: StepError,
  /** No attempt follows: the run fails with this error. */
  final: Schema.Boolean
}

/** The approver's decision on a parked call, as the command and its event carry it. */
export const approvalDecision = {
  decision: Schema.Literal("approved", "denied"),
  note: Schema.NullOr(Schema.String)
}

/** A person's answer to a `human_input` step, as the command and its event carry it. */
export const inputGiven = {
  response: Json,
  respondent: Schema.String
}

/** Sent once the automation admitted the run; the run id derives from what fired it. */
export class CreateRun extends Schema.TaggedClass<CreateRun>()("CreateRun", runStart) {}

export class BeginStep extends Schema.TaggedClass<BeginStep>()("BeginStep", step) {}

export class CompleteStep extends Schema.TaggedClass<CompleteStep>()("CompleteStep", {
  ...step,
  ...stepSuccess
}) {}

export class FailStep extends Schema.TaggedClass<FailStep>()("FailStep", {
  ...step,
  ...stepFailure
}) {}

export class AwaitInput extends Schema.TaggedClass<AwaitInput>()("AwaitInput", {
  ...step,
  ...inputAsked
}) {}

/** A tool step's call that needs approval, parked until `expiresAt`. */
export class AwaitApproval extends Schema.TaggedClass<AwaitApproval>()("AwaitApproval", {
  ...step,
  ...approvalAsked
}) {}

/** The approver's decision on the call the run waits for. */
export class ResolveStepApproval extends Schema.TaggedClass<ResolveStepApproval>()("ResolveStepApproval", {
  runId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  ...approvalDecision,
  userId: Schema.NonEmptyString,
  /** Signed by the shell, where the audit key is; recorded only if it describes the decision. */
  receipt: ApprovalReceipt
}) {}

/** A person's answer to the step waiting for it. */
export class ProvideInput extends Schema.TaggedClass<ProvideInput>()("ProvideInput", {
  runId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  ...inputGiven
}) {}

export const AutomationRunCommand = Schema.Union(CreateRun, BeginStep, CompleteStep, FailStep, AwaitInput, ProvideInput, AwaitApproval, ResolveStepApproval)
export type AutomationRunCommand = typeof AutomationRunCommand.Type
