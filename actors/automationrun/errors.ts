import { Schema } from "effect"
import { ApprovalExpired, ReceiptMismatch } from "../conversation/errors.ts"

/** 404 `not_found`, reason `run_not_found`: none, or in another workspace. */
export class AutomationRunNotFound extends Schema.TaggedError<AutomationRunNotFound>()("AutomationRunNotFound", { runId: Schema.String }) {}

/** 409 `conflict`, reason `stale_step`: the step or attempt is not the run's current one (a driver
 * that lost its partition, or a step already done). */
export class StaleStep extends Schema.TaggedError<StaleStep>()("StaleStep", {
  runId: Schema.String,
  index: Schema.Int,
  attempt: Schema.Int
}) {}

/** 409 `conflict`, reason `run_not_waiting`: the run waits for no one's input or approval. */
export class RunNotWaiting extends Schema.TaggedError<RunNotWaiting>()("RunNotWaiting", { runId: Schema.String }) {}

/** An approval a step waits for that expired or is another person's is 409 `approval_expired`, as in chat (spec 3.2);
 * a receipt that does not describe the decision is refused as chat refuses it. */
export const AutomationRunError = Schema.Union(AutomationRunNotFound, StaleStep, RunNotWaiting, ApprovalExpired, ReceiptMismatch)
export type AutomationRunError = typeof AutomationRunError.Type
