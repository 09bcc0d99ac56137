import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { ApprovalExpired, ReceiptMismatch } from "../conversation/errors.ts"
import { type AutomationRunError, AutomationRunNotFound, RunNotWaiting, StaleStep } from "./errors.ts"
import {
  ApprovalRequested,
  ApprovalResolved,
  type AutomationRunEvent,
  InputReceived,
  InputRequested,
  RunFailed,
  RunStarted,
  RunSucceeded,
  StepFailed,
  StepStarted,
  StepSucceeded
} from "./events.ts"
import type { AutomationRunCommand, BeginStep, ResolveStepApproval } from "./protocol.ts"
import { type AutomationRunState, currentAttempt, type Run, type StepRecord, stepApprovalId } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<AutomationRunEvent>, AutomationRunError>

/** The step that runs after `index` when nothing jumps: the next one, or none. */
export const nextAfter = (run: Pick<Run, "steps">, index: number): number | null => (index + 1 < run.steps.length ? index + 1 : null)

const existing = (state: AutomationRunState, runId: string): Either.Either<Run, AutomationRunNotFound> =>
  state._tag === "Run" ? Either.right(state) : Either.left(new AutomationRunNotFound({ runId }))

/** The current attempt a driver's command is about, still open (running, or waiting for input). */
const openAttempt = (state: AutomationRunState, command: { readonly runId: string; readonly index: number; readonly attempt: number }) =>
  Either.flatMap(existing(state, command.runId), (run): Either.Either<readonly [Run, StepRecord], AutomationRunError> => {
    const record = run.cursor === command.index ? currentAttempt(run, command.index) : undefined
    return record !== undefined && record.attempt === command.attempt && (record.status === "running" || record.status === "waiting")
      ? Either.right([run, record] as const)
      : Either.left(new StaleStep({ runId: command.runId, index: command.index, attempt: command.attempt }))
  })

/** A succeeded step, and the run's end when nothing follows. */
const succeeded = (runId: string, index: number, attempt: number, output: StepSucceeded["output"], next: number | null, at: string) => [
  new StepSucceeded({ runId, index, attempt, output, next, at }),
  ...(next === null ? [new RunSucceeded({ runId, at })] : [])
]

/** The attempt a person's answer is for: the run's, of this workspace, waiting at its cursor. */
const waitingAttempt = (state: AutomationRunState, command: { readonly runId: string; readonly workspaceId: string }) =>
  Either.flatMap(existing(state, command.runId), (run): Either.Either<readonly [Run, StepRecord], AutomationRunError> => {
    if (run.workspaceId !== command.workspaceId) return Either.left(new AutomationRunNotFound({ runId: command.runId }))
    const record = run.cursor === null ? undefined : currentAttempt(run, run.cursor)
    return run.status === "waiting" && record !== undefined && record.status === "waiting"
      ? Either.right([run, record] as const)
      : Either.left(new RunNotWaiting({ runId: command.runId }))
  })

/** The approver's decision: approved, the same attempt goes on to make the call; denied, the step
 * and the run fail. Expired or asked of another person, it is refused as chat refuses it. */
const resolveApproval = (state: AutomationRunState, command: ResolveStepApproval, meta: CommandMeta): Decision =>
  Either.flatMap(waitingAttempt(state, command), ([run, record]): Decision => {
    const { runId, decision, note, userId, receipt } = command
    const approval = record.approval
    if (approval === undefined) return Either.left(new RunNotWaiting({ runId }))
    if (Date.parse(meta.at) >= Date.parse(approval.expiresAt) || userId !== approval.approver) {
      return Either.left(new ApprovalExpired({ approvalId: runId }))
    }
    const { index, attempt } = record
    // every claim of the receipt but the input's hash, which the shell computed from the same parked input
    const describes = receipt.approvalId === stepApprovalId(runId, index, attempt) && receipt.orgId === run.orgId && receipt.workspaceId === run.workspaceId &&
      receipt.capability === approval.capability && receipt.askedBy === approval.approver && receipt.decidedBy === userId &&
      receipt.decision === decision && receipt.decidedAt === meta.at
    if (!describes) return Either.left(new ReceiptMismatch({ approvalId: stepApprovalId(runId, index, attempt) }))
    const resolved = new ApprovalResolved({ runId, index, attempt, decision, note, at: meta.at, orgId: run.orgId, receipt })
    if (decision === "approved") return Either.right([resolved])
    const error = { code: "approval_denied", message: `${approval.capability} was denied by the person the run acts for${note === null ? "" : `: ${note}`}` }
    return Either.right([
      resolved,
      new StepFailed({ runId, index, attempt, error, final: true, at: meta.at }),
      new RunFailed({ runId, index, error, at: meta.at })
    ])
  })

const begin = (state: AutomationRunState, command: BeginStep, meta: CommandMeta): Decision =>
  Either.flatMap(existing(state, command.runId), (run) => {
    const { runId, index, attempt } = command
    const stale = Either.left(new StaleStep({ runId, index, attempt }))
    if (run.status !== "running" || run.cursor !== index) return stale
    const current = currentAttempt(run, index)
    // the same attempt again (a driver's retry of its own command) changes nothing
    if (current !== undefined && current.attempt === attempt && current.status === "running") return Either.right([])
    if (current !== undefined && current.attempt >= attempt) return stale
    const { name, stepType } = run.steps[index]
    return Either.right([new StepStarted({ runId, index, attempt, name, stepType, at: meta.at })])
  })

export const decide = (state: AutomationRunState, command: AutomationRunCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "CreateRun": {
      // the id derives from what fired the run: a second creation is the same run, already there
      if (state._tag !== "Absent") return Either.right([])
      const { _tag, ...fields } = command
      return Either.right([
        new RunStarted({ ...fields, at: meta.at }),
        ...(command.steps.length === 0 ? [new RunSucceeded({ runId: command.runId, at: meta.at })] : [])
      ])
    }
    case "BeginStep":
      return begin(state, command, meta)
    case "CompleteStep":
      return Either.flatMap(openAttempt(state, command), ([run]) => {
        const { runId, index, attempt, output, next } = command
        // a jump goes forward only, so a run always ends
        const valid = next === null || (next > index && next < run.steps.length)
        return valid ? Either.right(succeeded(runId, index, attempt, output, next, meta.at)) : Either.left(new StaleStep({ runId, index, attempt }))
      })
    case "FailStep":
      return Either.map(openAttempt(state, command), () => {
        const { runId, index, attempt, error, final } = command
        return [
          new StepFailed({ runId, index, attempt, error, final, at: meta.at }),
          ...(final ? [new RunFailed({ runId, index, error, at: meta.at })] : [])
        ]
      })
    case "AwaitInput":
      return Either.flatMap(openAttempt(state, command), ([, record]) => {
        const { runId, index, attempt, prompt, assignee, expiresAt } = command
        // asked already (the driver resumed): the same wait goes on
        if (record.status === "waiting") return Either.right([])
        return Either.right([new InputRequested({ runId, index, attempt, prompt, assignee, expiresAt, at: meta.at })])
      })
    case "ProvideInput":
      return Either.flatMap(waitingAttempt(state, command), ([run, record]): Decision => {
        const { runId, response, respondent } = command
        // a call parked for approval is answered by approving it, not with input
        if (record.input === null) return Either.left(new RunNotWaiting({ runId }))
        const { index, attempt } = record
        return Either.right([
          new InputReceived({ runId, index, attempt, response, respondent, at: meta.at }),
          ...succeeded(runId, index, attempt, { response, respondent }, nextAfter(run, index), meta.at)
        ])
      })
    case "AwaitApproval":
      return Either.flatMap(openAttempt(state, command), ([, record]) => {
        const { runId, index, attempt, capability, input, approver, expiresAt } = command
        // parked already (the driver resumed): the same wait goes on
        if (record.status === "waiting") return Either.right([])
        return Either.right([new ApprovalRequested({ runId, index, attempt, capability, input, approver, expiresAt, at: meta.at })])
      })
    case "ResolveStepApproval":
      return resolveApproval(state, command, meta)
  }
}
