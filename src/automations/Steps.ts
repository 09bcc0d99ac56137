/**
 * What each step type does in a run (spec 2.8), one attempt at a time. Everything a step calls goes
 * through the one checkpoint as the run's person on the `playbook` surface (spec 6.3.2: the same
 * audit records, security events and metering as interactive use), except a webhook, which leaves
 * through the outbound guard, signed.
 */
import { Cause, Data, Effect, Exit } from "effect"
import { evaluate } from "../../actors/automation/conditions.ts"
import type { Step } from "../../actors/automation/definition.ts"
import { nextAfter } from "../../actors/automationrun/decide.ts"
import { approvedCall, type Run } from "../../actors/automationrun/state.ts"
import type { Json } from "../../actors/kernel.ts"
import type { Principal } from "../checkpoint/Capability.ts"
import { slugsOf } from "../identity/Auth.ts"
import { Capabilities } from "../checkpoint/Capability.ts"
import { invoke } from "../checkpoint/Checkpoint.ts"
import { AssistantSettings } from "../assistant/Settings.ts"
import { askAgent } from "../assistant/Agents.ts"
import { FailureDescriber } from "../platform/Failures.ts"
import { PlatformSecrets } from "../platform/Secrets.ts"
import { sendWebhook, type WebhookError } from "./Webhooks.ts"
import { openedRun } from "./RunWords.ts"
import { configOf, render, type TemplateContext } from "./Playbooks.ts"

/** A step attempt that failed; `retryable` when another attempt may succeed (timeouts, 5xx, 429). */
export class StepFailure extends Data.TaggedError("StepFailure")<{
  readonly code: string
  readonly message: string
  readonly retryable: boolean
}> {}

export type StepOutcome =
  | { readonly _tag: "done"; readonly output: Json; readonly next: number | null }
  /** A `human_input` step: the run waits for a person until `expiresAt`. */
  | { readonly _tag: "await"; readonly prompt: string; readonly assignee: string; readonly expiresAt: string }
  /** A tool step's call that needs approval: parked for the run's person until `expiresAt`. */
  | { readonly _tag: "approval"; readonly capability: string; readonly input: Json; readonly approver: string; readonly expiresAt: string }

/** The run acts for its person (who enabled the revision it runs), with their memberships as they
 * stand at each call. */
export const playbookPrincipal = (run: Run): Principal => ({
  credential: "playbook",
  apiKeyId: null,
  sessionId: null,
  orgId: run.orgId,
  workspaceId: run.workspaceId,
  userId: run.runAs.userId,
  attributedTo: run.runAs.userId,
  customRole: null,
  machineId: null,
  purpose: null,
  sso: null
})

/** What placeholders and condition steps read: the trigger, and each finished step's output by name. */
export const contextOf = (run: Run): TemplateContext => ({
  trigger: run.trigger as unknown as Json,
  steps: Object.fromEntries(run.timeline.filter((r) => r.status === "succeeded").map((r) => [r.name, { output: r.output }]))
})

/** A refusal or failure of the checkpoint, as the run's step error. */
const fromCause = <E>(cause: Cause.Cause<E>) =>
  Effect.flatMap(FailureDescriber, (describe) => {
    const { status, code, reason, message } = describe(cause)
    return Effect.fail(new StepFailure({ code: reason ?? code, message, retryable: status >= 500 || status === 429 }))
  })

const webhookFailure = (error: WebhookError): StepFailure => {
  switch (error._tag) {
    case "OutboundRefused":
      return new StepFailure({ code: "outbound_refused", message: `${error.url}: ${error.address ?? error.host} is not an address a webhook may call (${error.reason})`, retryable: false })
    case "OutboundTimeout":
      return new StepFailure({ code: "webhook_timeout", message: `${error.url} did not answer within ${error.timeoutMs} ms`, retryable: true })
    case "OutboundResponseTooLarge":
      return new StepFailure({ code: "webhook_response_too_large", message: `${error.url} answered with more than ${error.maxBytes} bytes`, retryable: false })
    case "OutboundConnectionFailed":
      return new StepFailure({ code: "webhook_connection_failed", message: `${error.url}: ${error.message}`, retryable: true })
    case "WebhookRejected":
      return new StepFailure({ code: "webhook_rejected", message: `${error.url} answered ${error.status}`, retryable: error.status >= 500 || error.status === 429 })
  }
}

/** The secret an automation's webhooks are signed with: derived from the platform key, so nothing is stored. */
export const webhookSecretOf = (automationId: string) =>
  Effect.map(PlatformSecrets, (secrets) => `whsec_${secrets.derive(`automation-webhook:${automationId}`).toString("base64")}`)

const pathOf = (run: Run) =>
  Effect.map(slugsOf(run.orgId, run.workspaceId), (slugs) => {
    const [orgSlug, workspaceSlug] = slugs.split("/")
    return { orgSlug, workspaceSlug }
  })

const exitToStep = <A>(exit: Exit.Exit<A, unknown>) => (Exit.isSuccess(exit) ? Effect.succeed(exit.value) : fromCause(exit.cause))

/** Runs one attempt at the run's step `index`; `now` dates a human input's or an approval's deadline. */
export const executeStep = (run: Run, index: number, now: number) =>
  Effect.gen(function* () {
    const step: Step = run.steps[index]
    // earlier outputs and the trigger's payload are sealed in the run: opened to fill placeholders,
    // and an approved call's input to run it
    const opened = yield* openedRun(run)
    const context = contextOf(opened)
    const next = nextAfter(run, index)
    const done = (output: Json, to: number | null = next): StepOutcome => ({ _tag: "done", output, next: to })
    switch (step.stepType) {
      case "tool": {
        const config = configOf({ ...step, stepType: "tool" })
        const approved = approvedCall(opened, index)
        // parked for the run's person, as chat parks such a call for its person (docs/decisions.md);
        // once approved, it runs with the input they approved
        if (approved === undefined && (yield* Capabilities).byName.get(config.capability)?.needsApproval === true) {
          return {
            _tag: "approval",
            capability: config.capability,
            input: render(config.input ?? {}, context),
            approver: run.runAs.userId,
            expiresAt: new Date(now + (yield* AssistantSettings).approvalTtlMs).toISOString()
          } satisfies StepOutcome
        }
        const output = yield* exitToStep(
          yield* Effect.exit(
            invoke({
              authorization: undefined,
              principal: playbookPrincipal(run),
              surface: "playbook",
              capability: config.capability,
              path: null,
              input: Effect.succeed(approved?.input ?? render(config.input ?? {}, context)),
              // an attempt after one whose outcome is unknown replays it rather than act twice
              idempotencyKey: `${run.runId}:${index}`
            })
          )
        )
        return done(output as Json)
      }
      case "condition": {
        const config = configOf({ ...step, stepType: "condition" })
        const matched = evaluate(config.conditions, { current: context as unknown as Record<string, Json> })
        const otherwise = config.else === undefined ? null : run.steps.findIndex((s) => s.name === config.else)
        return done({ matched }, matched ? next : otherwise)
      }
      case "webhook": {
        const config = configOf({ ...step, stepType: "webhook" })
        const sent = yield* sendWebhook({
          url: config.url,
          method: config.method,
          headers: config.headers,
          body: render(config.body ?? { automationId: run.automationId, runId: run.runId, trigger: "{{trigger}}" }, context),
          // the same id on every attempt: receivers drop what they already handled
          webhookId: `${run.runId}.${index}`,
          secret: yield* webhookSecretOf(run.automationId)
        }).pipe(Effect.mapError(webhookFailure))
        return done({ status: sent.status, body: sent.body as Json })
      }
      case "agent":
      case "prompt": {
        const asked = step.stepType === "agent"
          ? (() => {
              const config = configOf({ ...step, stepType: "agent" })
              return { agentSlug: config.agentSlug, content: render(config.prompt ?? "{{trigger}}", context), tier: undefined }
            })()
          : (() => {
              const config = configOf({ ...step, stepType: "prompt" })
              return { agentSlug: "assistant", content: render(config.prompt, context), tier: config.tier }
            })()
        const content = typeof asked.content === "string" ? asked.content : JSON.stringify(asked.content)
        const result = yield* exitToStep(
          yield* Effect.exit(
            askAgent({ principal: playbookPrincipal(run), path: yield* pathOf(run), surface: "playbook", agentSlug: asked.agentSlug, content: content.slice(0, 32768), ...(asked.tier === undefined ? {} : { tier: asked.tier }) })
          )
        )
        return done({ reply: result.reply, conversationId: result.conversationPublicId, runId: result.runId })
      }
      case "human_input": {
        const config = configOf({ ...step, stepType: "human_input" })
        const prompt = render(config.prompt, context)
        return {
          _tag: "await",
          prompt: typeof prompt === "string" ? prompt : JSON.stringify(prompt),
          assignee: config.assignee ?? run.runAs.userId,
          expiresAt: new Date(now + (config.timeoutSeconds ?? 24 * 3600) * 1000).toISOString()
        } satisfies StepOutcome
      }
    }
  }).pipe(
    // what the step's own calls failed with (a database not answering), stated as the checkpoint states it
    Effect.catchAll((error): Effect.Effect<never, StepFailure, FailureDescriber> => (error instanceof StepFailure ? Effect.fail(error) : fromCause(Cause.fail(error))))
  )
