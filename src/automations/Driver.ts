/**
 * Drives runs: the owner of a run's partition takes it a step at a time, recording each attempt's
 * start and end on the run before and after doing it. A node killed mid-step leaves the step
 * started; the partition's next owner starts it again as a new attempt (a tool step with the same
 * idempotency key, a webhook with the same id), and never runs a finished one again. Each command
 * names its step and attempt, so a driver that lost its partition cannot record over its successor.
 */
import { Clock, Duration, Effect, Either, Option } from "effect"
import { AutomationActor } from "../../actors/automation/actor.ts"
import { EndScheduledRun } from "../../actors/automation/protocol.ts"
import { AutomationRunActor } from "../../actors/automationrun/actor.ts"
import type { AutomationRunEvent } from "../../actors/automationrun/events.ts"
import { AwaitApproval, AwaitInput, BeginStep, type AutomationRunCommand, CompleteStep, FailStep } from "../../actors/automationrun/protocol.ts"
import { type AutomationRunState, currentAttempt, isActive, type Run } from "../../actors/automationrun/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { personSealer } from "../audit/PersonalData.ts"
import { follow, type Followed, LogSignals } from "../../streams/LogSignals.ts"
import { policyOf } from "./Playbooks.ts"
import { playbookActor } from "./Runs.ts"
import { executeStep, StepFailure } from "./Steps.ts"

/** How long a failed attempt waits before the next: 1 s, doubling, at most 30 s. */
const backoff = (attempt: number) => Duration.seconds(Math.min(30, 2 ** (attempt - 1)))

/** The run stops being this driver's: another driver recorded past it, or its partition moved. */
class Superseded {
  readonly _tag = "Superseded"
}

export interface DriveOptions {
  /** Whether this node still owns the run's partition (checked before each step). */
  readonly owns: () => boolean
  /** The run as its start left it, when the driver is started by hearing it (no read needed). */
  readonly started?: { readonly state: AutomationRunState; readonly seq: number }
}

/** Takes the run to its end (or until the node no longer owns it). */
export const drive = (runId: string, options: DriveOptions) =>
  Effect.scoped(
    Effect.gen(function* () {
      const host = yield* ActorHost
      // what the run's start said is all there is so far; a run found otherwise is read once the
      // read models hold it
      let followed: Followed<AutomationRunState, AutomationRunEvent> = options.started === undefined
        ? yield* follow(AutomationRunActor, runId)
        : { ...options.started, take: (yield* (yield* LogSignals).watch(AutomationRunActor, runId)).take }
      let state = followed.state
      let seq = followed.seq

      const send = (command: AutomationRunCommand, name: string) =>
        Effect.gen(function* () {
          const at = new Date(yield* Clock.currentTimeMillis).toISOString()
          const run = state as Run
          const sent = yield* host.send(AutomationRunActor, runId, command, { commandId: `${runId}:${name}`, at, actor: playbookActor(run.automationId) }).pipe(
            Effect.catchTags({ StaleStep: () => Effect.fail(new Superseded()), AutomationRunNotFound: () => Effect.fail(new Superseded()) })
          )
          if (sent.seq > seq) {
            state = sent.state
            seq = sent.seq
          }
        })

      /** Waits for the events others append (a person's input or decision), applying them, until `deadline`; false when it passed. */
      const awaitChange = (deadline: number) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const heard = yield* followed.take.pipe(Effect.timeoutOption(Duration.millis(Math.max(0, deadline - now))))
          if (Option.isNone(heard)) return false
          if (heard.value.seq > seq) {
            state = AutomationRunActor.evolve(state, heard.value.event)
            seq = heard.value.seq
          }
          return true
        })

      /** Fails the attempt. Its message may quote a rendered input: it goes to the log sealed under the
       * key of the person the run acts for (docs/audit.md). */
      const fail = (index: number, attempt: number, error: { readonly code: string; readonly message: string }, final: boolean) =>
        Effect.gen(function* () {
          const sealer = yield* personSealer((state as Run).runAs.userId)
          yield* send(new FailStep({ runId, index, attempt, error: { ...error, message: sealer.seal(error.message) }, final }), `${index}:${attempt}:fail`)
        })

      /** Reads the run afresh, after another writer moved it. */
      const refresh = Effect.gen(function* () {
        followed = yield* follow(AutomationRunActor, runId)
        state = followed.state
        seq = followed.seq
      })

      const step = Effect.gen(function* () {
        const run = state as Run
        const index = run.cursor!
        const current = currentAttempt(run, index)
        if (current?.status === "waiting") {
          // a person's input, or their approval of a call: unanswered by its deadline, the step fails
          const { expiresAt } = current.input ?? current.approval!
          const deadline = Date.parse(expiresAt)
          if (!(yield* awaitChange(deadline)) && (yield* Clock.currentTimeMillis) >= deadline) {
            const error = current.input !== null
              ? { code: "human_input_timeout", message: `nobody answered by ${expiresAt}` }
              : { code: "approval_expired", message: `nobody approved ${current.approval!.capability} by ${expiresAt}` }
            yield* fail(index, current.attempt, error, true)
          }
          return
        }
        const policy = policyOf(run.steps[index])
        // a call just approved goes on in the attempt that parked it (the same idempotency key, so a
        // driver taking over after it began cannot make it twice)
        const resumed = current?.status === "running" && current.approval?.decision === "approved"
        // after a failed attempt: its backoff, counted from when it failed
        if (current?.status === "failed" && current.endedAt !== null) {
          const wait = Date.parse(current.endedAt) + Duration.toMillis(backoff(current.attempt)) - (yield* Clock.currentTimeMillis)
          if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
          if (!options.owns()) return yield* Effect.fail(new Superseded())
        }
        const attempt = resumed ? current.attempt : (current?.attempt ?? 0) + 1
        if (!resumed) yield* send(new BeginStep({ runId, index, attempt }), `${index}:${attempt}:begin`)
        const started = state as Run
        const outcome = yield* executeStep(started, index, yield* Clock.currentTimeMillis).pipe(
          Effect.timeoutFail({
            duration: Duration.seconds(policy.timeoutSeconds),
            onTimeout: () => new StepFailure({ code: "step_timeout", message: `the step did not finish within ${policy.timeoutSeconds} s`, retryable: true })
          }),
          Effect.catchAllDefect((defect) => Effect.fail(new StepFailure({ code: "step_error", message: String(defect), retryable: false }))),
          Effect.either
        )
        if (Either.isLeft(outcome)) {
          const { code, message, retryable } = outcome.left
          const final = !retryable || attempt >= policy.maxAttempts
          return yield* fail(index, attempt, { code, message }, final)
        }
        const result = outcome.right
        // the question asked, a parked call's input and the output, rendered from the run's words, go
        // to the log sealed under the key of the person the run acts for (docs/audit.md)
        const sealer = yield* personSealer(started.runAs.userId)
        if (result._tag === "approval") {
          const { capability, input, approver, expiresAt } = result
          return yield* send(new AwaitApproval({ runId, index, attempt, capability, input: sealer.sealJson(input), approver, expiresAt }), `${index}:${attempt}:approval`)
        }
        if (result._tag === "await") {
          return yield* send(new AwaitInput({ runId, index, attempt, prompt: sealer.seal(result.prompt), assignee: result.assignee, expiresAt: result.expiresAt }), `${index}:${attempt}:await`)
        }
        yield* send(new CompleteStep({ runId, index, attempt, output: sealer.sealJson(result.output), next: result.next }), `${index}:${attempt}:complete`)
      })

      // a run past its last step ends in the same append (its end may not be applied here yet)
      while (state._tag === "Run" && isActive(state) && state.cursor !== null) {
        if (!options.owns()) return
        const went = yield* Effect.either(step)
        if (Either.isLeft(went)) {
          if (went.left instanceof Superseded) {
            if (!options.owns()) return
            yield* refresh
            continue
          }
          return yield* Effect.fail(went.left)
        }
      }
      // a scheduled run that ended lets the schedule's next tick run
      if (state._tag === "Run" && state.trigger.type === "schedule") {
        const { automationId, workspaceId } = state
        const at = new Date(yield* Clock.currentTimeMillis).toISOString()
        yield* host.send(AutomationActor, automationId, new EndScheduledRun({ automationId, workspaceId, runId }), { commandId: `${runId}:ended`, at, actor: playbookActor(automationId) }).pipe(
          Effect.catchTag("AutomationNotFound", () => Effect.void)
        )
      }
    })
  )
