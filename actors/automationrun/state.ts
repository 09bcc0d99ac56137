import { Schema } from "effect"
import { RunAs, RunTrigger, Step, StepType } from "../automation/definition.ts"
import { ApprovalReceipt } from "../conversation/events.ts"
import { Json } from "../kernel.ts"

export const StepError = Schema.Struct({ code: Schema.String, message: Schema.String })
export type StepError = typeof StepError.Type

/** What a `human_input` step asks: the command asking for it and its event carry the same. */
export const inputAsked = {
  prompt: Schema.String,
  /** The person asked (who gets the notice); any person of the workspace may answer. */
  assignee: Schema.String,
  expiresAt: Schema.String
}

/** A person's input a `human_input` step waits for. */
export const InputRequest = Schema.Struct({ ...inputAsked, requestedAt: Schema.String })
export type InputRequest = typeof InputRequest.Type

/** What a parked call asks the approver: the command parking it and its event carry the same. */
export const approvalAsked = {
  capability: Schema.String,
  /** The call's input as approved: what runs. */
  input: Json,
  /** The person the run acts for, the only one who may answer (spec 4.1 rule 6). */
  approver: Schema.String,
  expiresAt: Schema.String
}

/** A tool step's call of a capability that needs approval: parked, as chat parks one, until the
 * person the run acts for approves or denies it. */
export const StepApproval = Schema.Struct({
  ...approvalAsked,
  requestedAt: Schema.String,
  decision: Schema.NullOr(Schema.Literal("approved", "denied")),
  note: Schema.NullOr(Schema.String),
  resolvedAt: Schema.NullOr(Schema.String),
  /** The signed receipt of the decision (absent before it, and in records stored before receipts). */
  receipt: Schema.optional(ApprovalReceipt)
})
export type StepApproval = typeof StepApproval.Type

/** What a step's approval is called in its signed receipt (docs/audit.md): the run, the step and the attempt that parked the call. */
export const stepApprovalId = (runId: string, index: number, attempt: number) => `${runId}:${index}:${attempt}`

/** One attempt at one step, as the run's timeline shows it. */
export const StepRecord = Schema.Struct({
  index: Schema.Int,
  name: Schema.String,
  stepType: StepType,
  status: Schema.Literal("running", "waiting", "succeeded", "failed"),
  attempt: Schema.Int,
  startedAt: Schema.String,
  endedAt: Schema.NullOr(Schema.String),
  /** The step's output once it succeeded (null before). */
  output: Json,
  error: Schema.NullOr(StepError),
  input: Schema.NullOr(InputRequest),
  /** Only on an attempt that asked for approval (so a record stored before approvals reads as it was). */
  approval: Schema.optional(StepApproval)
})
export type StepRecord = typeof StepRecord.Type

export const RunStatus = Schema.Literal("running", "waiting", "succeeded", "failed")
export type RunStatus = typeof RunStatus.Type

/** What a run starts with: the command creating it, its event and the state carry the same. */
export const runStart = {
  runId: Schema.NonEmptyString,
  automationId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  trigger: RunTrigger,
  /** The playbook as it stood when the run started. */
  steps: Schema.Array(Step),
  runAs: RunAs
}

export const Run = Schema.TaggedStruct("Run", {
  ...runStart,
  status: RunStatus,
  /** The step to run next, or running now; null once the run ended. */
  cursor: Schema.NullOr(Schema.Int),
  /** Every attempt at every step, in order. */
  timeline: Schema.Array(StepRecord),
  startedAt: Schema.String,
  endedAt: Schema.NullOr(Schema.String),
  /** The failed step's error, which is the run's. */
  error: Schema.NullOr(Schema.Struct({ ...StepError.fields, step: Schema.String }))
})
export type Run = typeof Run.Type

export const AutomationRunState = Schema.Union(Schema.TaggedStruct("Absent", {}), Run)
export type AutomationRunState = typeof AutomationRunState.Type

export const initialRunState: AutomationRunState = { _tag: "Absent" }

/** The latest attempt at a step, if any. */
export const currentAttempt = (run: Run, index: number): StepRecord | undefined => run.timeline.findLast((r) => r.index === index)

/** Whether the person approved the call of the run's step `index` (in any attempt): a later attempt
 * at it, after a failure, makes the call without asking again. */
export const approvedCall = (run: Run, index: number): StepApproval | undefined =>
  run.timeline.findLast((r) => r.index === index && r.approval?.decision === "approved")?.approval

export const isActive = (run: Run) => run.status === "running" || run.status === "waiting"
