/**
 * A playbook's steps as callers write them: each step type's config, checked at create and update
 * against what exists (capabilities, agents), the defaults of its timeout and retry policy, and the
 * `{{path}}` placeholders that carry the trigger's data and earlier steps' outputs into a step.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { type ConditionNode, ConditionTree, validateStepConditions } from "../../actors/automation/conditions.ts"
import type { Step, StepType } from "../../actors/automation/definition.ts"
import { Json } from "../../actors/kernel.ts"
import type { Db, DbError } from "../../streams/Db.ts"
import type { AccessCache } from "../checkpoint/AccessCache.ts"
import { Capabilities } from "../checkpoint/Capability.ts"
import { BadRequest } from "../platform/Errors.ts"
import { refusedHeader } from "./Webhooks.ts"

/** Steps a playbook holds at most. */
export const MAX_STEPS = 50

const Seconds = (max: number) => Schema.Int.pipe(Schema.between(1, max))
const policy = { timeoutSeconds: Schema.optional(Seconds(3600)), maxAttempts: Schema.optional(Schema.Int.pipe(Schema.between(1, 10))) }
const Text = (max: number) => Schema.String.pipe(Schema.minLength(1), Schema.maxLength(max))

export const ToolConfig = Schema.Struct({ capability: Schema.NonEmptyString, input: Schema.optional(Schema.Record({ key: Schema.String, value: Json })), ...policy })
export const AgentConfig = Schema.Struct({ agentSlug: Schema.NonEmptyString, prompt: Schema.optional(Text(32768)), ...policy })
export const PromptConfig = Schema.Struct({ prompt: Text(32768), tier: Schema.optional(Schema.NonEmptyString), ...policy })
/** When the tree holds the run goes on with the next step; when not, at the step `else` names (a
 * later one), or it ends. */
export const ConditionConfig = Schema.Struct({ conditions: ConditionTree, else: Schema.optional(Schema.NonEmptyString) })
export const WebhookConfig = Schema.Struct({
  url: Schema.String.pipe(Schema.maxLength(2048)),
  method: Schema.optional(Schema.Literal("POST", "PUT", "PATCH")),
  headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  body: Schema.optional(Json),
  ...policy
})
export const HumanInputConfig = Schema.Struct({
  prompt: Text(4000),
  /** The person asked (a user id); when omitted, the person the run acts for (who enabled it). */
  assignee: Schema.optional(Schema.NonEmptyString),
  /** Up to 30 days. */
  timeoutSeconds: Schema.optional(Seconds(30 * 24 * 3600))
})

const configs = {
  tool: ToolConfig,
  agent: AgentConfig,
  prompt: PromptConfig,
  condition: ConditionConfig,
  webhook: WebhookConfig,
  human_input: HumanInputConfig
} as const

export type StepConfig<T extends StepType> = Schema.Schema.Type<(typeof configs)[T]>

/** Each step type's timeout and attempts when its config sets none (docs/decisions.md). */
export const DEFAULT_POLICY: { readonly [T in StepType]: { readonly timeoutSeconds: number; readonly maxAttempts: number } } = {
  tool: { timeoutSeconds: 30, maxAttempts: 3 },
  agent: { timeoutSeconds: 300, maxAttempts: 1 },
  prompt: { timeoutSeconds: 120, maxAttempts: 2 },
  condition: { timeoutSeconds: 5, maxAttempts: 1 },
  webhook: { timeoutSeconds: 10, maxAttempts: 3 },
  human_input: { timeoutSeconds: 24 * 3600, maxAttempts: 1 }
}

/** A stored step's config, decoded for its type (it was checked when the playbook was saved). */
export const configOf = <T extends StepType>(step: Step & { readonly stepType: T }): StepConfig<T> =>
  Schema.decodeUnknownSync(configs[step.stepType] as unknown as Schema.Schema<StepConfig<T>, unknown>)(step.config)

export const policyOf = (step: Step) => {
  const config = step.config as { readonly timeoutSeconds?: number; readonly maxAttempts?: number }
  const defaults = DEFAULT_POLICY[step.stepType]
  return { timeoutSeconds: config.timeoutSeconds ?? defaults.timeoutSeconds, maxAttempts: config.maxAttempts ?? defaults.maxAttempts }
}

const invalidStep = (step: { readonly name: string }, message: string) =>
  new BadRequest({ reason: "invalid_step_config", message: `step '${step.name}': ${message}` })

export interface StepChecks {
  /** Whether the workspace has the agent (the default `assistant` included). */
  readonly agentExists: (slug: string) => Effect.Effect<boolean, DbError, Db>
  /** Whether the user is a person of the workspace (a member of it, or an Owner of its organization). */
  readonly personOfWorkspace: (userId: string) => Effect.Effect<boolean, DbError, Db | AccessCache>
}

/**
 * Checks a playbook: names unique, each config of its type's shape, a tool step's capability one
 * the playbook surface offers, an agent step's agent deployed in the workspace, a condition's tree
 * and its `else` a later step, a webhook's URL http(s) and none of its headers one the transport or
 * a proxy writes (`refusedHeader`). 400 with the reason naming what is wrong.
 */
export const checkSteps = (steps: ReadonlyArray<Step>, checks: StepChecks) =>
  Effect.gen(function* () {
    if (steps.length > MAX_STEPS) return yield* new BadRequest({ reason: "too_many_steps", message: `a playbook holds at most ${MAX_STEPS} steps` })
    const registry = yield* Capabilities
    const names = steps.map((s) => s.name)
    for (const [index, step] of steps.entries()) {
      if (names.indexOf(step.name) !== index) {
        return yield* new BadRequest({ reason: "duplicate_step_name", message: `two steps are named '${step.name}'` })
      }
      const decoded = Schema.decodeUnknownEither(configs[step.stepType] as Schema.Schema<unknown, unknown>, { onExcessProperty: "error" })(step.config)
      if (Either.isLeft(decoded)) return yield* invalidStep(step, ParseResult.TreeFormatter.formatErrorSync(decoded.left))
      const config = decoded.right as Record<string, unknown>
      switch (step.stepType) {
        case "tool": {
          const capability = registry.byName.get(config.capability as string)
          if (capability === undefined || !capability.surfaces.includes("agent")) {
            return yield* new BadRequest({ reason: "unknown_capability", message: `step '${step.name}': no capability ${config.capability as string} may run in a playbook` })
          }
          break
        }
        case "agent":
          if (!(yield* checks.agentExists(config.agentSlug as string))) {
            return yield* new BadRequest({ reason: "unknown_agent", message: `step '${step.name}': no agent '${config.agentSlug as string}' is deployed in this workspace` })
          }
          break
        case "condition": {
          yield* validateStepConditions(config.conditions as ConditionNode)
          const target = config.else as string | undefined
          if (target !== undefined && names.indexOf(target) <= index) {
            return yield* invalidStep(step, `else must name a later step, and '${target}' is not one`)
          }
          break
        }
        case "webhook": {
          const url = URL.canParse(config.url as string) ? new URL(config.url as string) : undefined
          if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
            return yield* invalidStep(step, "url must be an absolute http or https URL")
          }
          for (const name of Object.keys((config.headers as Record<string, string> | undefined) ?? {})) {
            const refused = refusedHeader(name)
            if (refused !== undefined) return yield* invalidStep(step, `header ${refused}; a step may not set it`)
          }
          break
        }
        case "human_input": {
          const assignee = config.assignee as string | undefined
          if (assignee !== undefined && !(yield* checks.personOfWorkspace(assignee))) {
            return yield* new BadRequest({ reason: "unknown_assignee", message: `step '${step.name}': ${assignee} is not a person of this workspace` })
          }
          break
        }
        case "prompt":
          break
      }
    }
  })

/** What placeholders read: `trigger` (what fired the run) and `steps.<name>.output`. */
export type TemplateContext = { readonly trigger: Json; readonly steps: { readonly [name: string]: { readonly output: Json } } }

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g
const WHOLE = /^\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}$/

const lookup = (context: TemplateContext, path: string): Json | undefined => {
  let at: unknown = context
  for (const segment of path.split(".")) {
    if (at === null || typeof at !== "object" || !Object.hasOwn(at, segment)) return undefined
    at = (at as Record<string, unknown>)[segment]
  }
  return at as Json
}

/**
 * Fills placeholders: a string that is one placeholder becomes the value it names (of any JSON
 * type); placeholders within text become that value as text (JSON for objects). A path that names
 * nothing becomes null, or the empty string within text.
 */
export const render = (value: Json, context: TemplateContext): Json => {
  if (typeof value === "string") {
    const whole = WHOLE.exec(value)
    if (whole !== null) return lookup(context, whole[1]) ?? null
    return value.replace(PLACEHOLDER, (_, path: string) => {
      const found = lookup(context, path)
      return found === undefined || found === null ? "" : typeof found === "string" ? found : JSON.stringify(found)
    })
  }
  if (Array.isArray(value)) return value.map((v) => render(v, context))
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, render(v, context)]))
  return value
}
