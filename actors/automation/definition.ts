/**
 * What an automation is made of (spec 2.8): its trigger and its playbook's steps, shared by the
 * automation actor (which owns them) and the run actor (whose runs carry the steps they follow).
 */
import { Schema } from "effect"
import { Json } from "../kernel.ts"
import { ConditionTree } from "./conditions.ts"

export const NodeEventType = Schema.Literal("node.created", "node.updated", "node.deleted")
export type NodeEventType = typeof NodeEventType.Type

export const EventTrigger = Schema.Struct({
  type: Schema.Literal("event"),
  /** The node label watched. */
  entityType: Schema.NonEmptyString,
  eventType: NodeEventType,
  conditions: Schema.optional(ConditionTree)
})
export type EventTrigger = typeof EventTrigger.Type

export const ScheduleTrigger = Schema.Struct({
  type: Schema.Literal("schedule"),
  /** POSIX cron, five fields. */
  cronExpression: Schema.NonEmptyString,
  /** IANA time zone the expression is read in. */
  timezone: Schema.NonEmptyString
})
export type ScheduleTrigger = typeof ScheduleTrigger.Type

export const ApiTrigger = Schema.Struct({ type: Schema.Literal("api") })

export const Trigger = Schema.Union(EventTrigger, ScheduleTrigger, ApiTrigger)
export type Trigger = typeof Trigger.Type

export const StepType = Schema.Literal("agent", "tool", "condition", "webhook", "prompt", "human_input")
export type StepType = typeof StepType.Type

/** A playbook step; `config` is checked per step type by the application (it needs the registry). */
export const Step = Schema.Struct({
  name: Schema.NonEmptyString,
  stepType: StepType,
  config: Schema.Record({ key: Schema.String, value: Json })
})
export type Step = typeof Step.Type

/** A person, and the key that stood for them if any: an automation's owner (whom its creator was or
 * stood for), and whom a run acts for (the person who enabled the revision it runs, no key). */
export const RunAs = Schema.Struct({
  userId: Schema.NonEmptyString,
  /** The key the automation was created with, if any (recorded, not used to authenticate). */
  apiKeyId: Schema.NullOr(Schema.String)
})
export type RunAs = typeof RunAs.Type

/** Where a change to an automation came from (spec 3.4): `human` only for a person's own sign-in on
 * the API; keys, MCP and the agent are `ai`. */
export const Origin = Schema.Literal("human", "ai")
export type Origin = typeof Origin.Type

/** What fired a run: the node event (by its log coordinates), the schedule tick, or an API call. */
export const RunTrigger = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("event"),
    eventType: NodeEventType,
    nodeId: Schema.String,
    label: Schema.String,
    /** The node event's key and seq: the run's id derives from them. */
    key: Schema.String,
    seq: Schema.Int,
    /** When the node event happened. */
    at: Schema.String,
    /** The node's properties after the event (before it, for a deletion). */
    properties: Schema.Record({ key: Schema.String, value: Json }),
    /** Changed properties of an update: `{ from, to }` each. */
    changes: Schema.NullOr(Schema.Record({ key: Schema.String, value: Json }))
  }),
  Schema.Struct({ type: Schema.Literal("schedule"), tick: Schema.String }),
  Schema.Struct({ type: Schema.Literal("api"), at: Schema.String, payload: Json })
)
export type RunTrigger = typeof RunTrigger.Type

/** Whether two JSON values are alike, field order included (as stored definitions keep it). */
export const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** Whether two definitions run alike: same trigger, same steps. A new name or description changes
 * neither; any other change is a new revision, which runs only once a person enables it. */
export const samePlaybook = (
  a: { readonly trigger: Trigger; readonly steps: ReadonlyArray<Step> },
  b: { readonly trigger: Trigger; readonly steps: ReadonlyArray<Step> }
) => sameJson(a.trigger, b.trigger) && sameJson(a.steps, b.steps)

/** When the trigger fired: what the enable gate compares with when it went live. */
export const firedAt = (trigger: RunTrigger): string => (trigger.type === "schedule" ? trigger.tick : trigger.at)
