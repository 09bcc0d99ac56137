import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { AutomationActor } from "../../actors/automation/actor.ts"
import type { Origin, RunTrigger, Step, Trigger } from "../../actors/automation/definition.ts"
import {
  AutomationExists,
  AutomationIsDisabled,
  AutomationNotFound,
  HumanRequired,
  TickAlreadyDecided,
  TriggerMismatch
} from "../../actors/automation/errors.ts"
import {
  AutomationCreated,
  AutomationDeleted,
  AutomationDisabled,
  AutomationEnabled,
  type AutomationEvent,
  AutomationHeld,
  AutomationUpdated,
  RunAdmitted,
  ScheduledRunEnded,
  TickSkipped
} from "../../actors/automation/events.ts"
import {
  AdmitRun,
  CreateAutomation,
  DeleteAutomation,
  DisableAutomation,
  EnableAutomation,
  EndScheduledRun,
  UpdateAutomation
} from "../../actors/automation/protocol.ts"
import { enablerOf } from "../../actors/automation/state.ts"
import { meta, projectedRows, spec } from "../support/decider.ts"

const T0 = "2024-05-01T10:00:00.000Z"
const T1 = "2024-05-01T11:00:00.000Z"
const T2 = "2024-05-01T12:00:00.000Z"
const T3 = "2024-05-01T13:00:00.000Z"
const T4 = "2024-05-01T14:00:00.000Z"

const target = { automationId: "aut_1", workspaceId: "w1" }
const runAs = { userId: "u1", apiKeyId: null }
const steps: ReadonlyArray<Step> = [{ name: "Notify", stepType: "webhook", config: { url: "https://hooks.example.com/tasks" } }]
const onNewTask: Trigger = { type: "event", entityType: "Task", eventType: "node.created" }
const onTaskUpdate: Trigger = { type: "event", entityType: "Task", eventType: "node.updated" }
const hourly: Trigger = { type: "schedule", cronExpression: "0 * * * *", timezone: "UTC" }

const definition = { ...target, orgId: "o1", name: "Triage", description: "Sort new tasks", trigger: onNewTask, steps, runAs }
const create = (origin: Origin, enabled?: boolean) =>
  new CreateAutomation({ ...definition, origin, ...(enabled === undefined ? {} : { enabled }) })
const created = (fields: Partial<ConstructorParameters<typeof AutomationCreated>[0]> = {}) =>
  new AutomationCreated({ ...definition, enabled: true, origin: "human", at: T0, ...fields })
/** A change by or for `u2`: a person's own (`human`) unless said otherwise. */
const update = (fields: Omit<ConstructorParameters<typeof UpdateAutomation>[0], keyof typeof target | "origin" | "by">, origin: Origin = "human") =>
  new UpdateAutomation({ ...target, ...fields, origin, by: "u2" })
const updated = (fields: Partial<ConstructorParameters<typeof AutomationUpdated>[0]>) =>
  new AutomationUpdated({ ...target, name: "Triage", description: "Sort new tasks", trigger: onNewTask, steps, triggerReplaced: false, origin: "human", by: "u2", at: T2, ...fields })
const enable = (origin: Origin, by = "u3") => new EnableAutomation({ ...target, origin, by })
const enabled = (at: string, by: string | null = "u3") => new AutomationEnabled({ ...target, by, at })
const held = (at: string) => new AutomationHeld({ ...target, by: "u2", at })
const disabled = (at: string) => new AutomationDisabled({ ...target, at })
const deleted = new AutomationDeleted(target)

const live = created()
const off = created({ enabled: false })
const scheduled = created({ trigger: hourly })

/** A node event that fired at `at`, the way the event reaction asks for its run. */
const nodeEvent = (at: string, eventType: "node.created" | "node.updated" = "node.created"): RunTrigger => ({
  type: "event",
  eventType,
  nodeId: "n1",
  label: "Task",
  key: "node:n1",
  seq: 1,
  at,
  properties: { title: "Write" },
  changes: null
})
const admit = (runId: string, trigger: RunTrigger) => new AdmitRun({ ...target, runId, trigger })
const tick = (at: string) => admit(`arn_${at}`, { type: "schedule", tick: at })
const admitted = (runId: string, tickAt: string | null = null) => new RunAdmitted({ ...target, runId, tick: tickAt })
const tickAdmitted = (at: string) => admitted(`arn_${at}`, at)
const ended = (at: string) => new ScheduledRunEnded({ ...target, runId: `arn_${at}` })

const notFound = new AutomationNotFound({ automationId: "aut_1" })
const missing: ReadonlyArray<readonly [string, ReadonlyArray<AutomationEvent>]> = [
  ["a missing automation", []],
  ["a deleted automation", [live, deleted]],
  ["an automation of another workspace", [created({ workspaceId: "w2" })]]
]

describe("the enable gate (spec 3.4)", () => {
  it.each([
    ["an AI origin asking for it enabled", "ai", true, false],
    ["an AI origin asking for it disabled", "ai", false, false],
    ["an AI origin asking nothing", "ai", undefined, false],
    ["a person asking for it enabled", "human", true, true],
    ["a person asking nothing", "human", undefined, false],
    ["a person asking for it disabled", "human", false, false]
  ] as const)("creates from %s: enabled is %s", (_, origin, asked, result) =>
    spec(AutomationActor)
      .given([])
      .when(create(origin, asked), meta({ at: T0 }))
      .then([created({ origin, enabled: result })]))

  it("lets a person enable a disabled automation; its trigger goes live then", () =>
    spec(AutomationActor)
      .given([off])
      .when(enable("human"), meta({ at: T1 }))
      .then([enabled(T1)]))

  it.each([
    ["disabled", [off]],
    ["enabled", [live]]
  ] as const)("refuses an AI origin enabling an automation that is %s", (_, history) =>
    spec(AutomationActor)
      .given(history)
      .when(enable("ai"))
      .thenThrows(new HumanRequired({ automationId: "aut_1" })))

  it("does nothing when a person enables an enabled automation", () =>
    spec(AutomationActor)
      .given([live])
      .when(enable("human"))
      .thenNothingHappened())

  it("disables an enabled automation, whoever asks", () =>
    spec(AutomationActor).given([live]).when(new DisableAutomation(target), meta({ at: T1 })).then([disabled(T1)]))

  it("does nothing when a disabled automation is disabled", () =>
    spec(AutomationActor).given([live, disabled(T1)]).when(new DisableAutomation(target)).thenNothingHappened())

  it.each(missing)("does not find %s to enable, disable or delete", (_, history) => {
    spec(AutomationActor).given(history).when(enable("human")).thenThrows(notFound)
    spec(AutomationActor).given(history).when(new DisableAutomation(target)).thenThrows(notFound)
    spec(AutomationActor).given(history).when(new DeleteAutomation(target)).thenThrows(notFound)
  })
})

describe("CreateAutomation", () => {
  it.each([
    ["a live automation", [live]],
    ["a deleted automation", [live, deleted]]
  ] as const)("refuses an id taken by %s", (_, history) =>
    spec(AutomationActor)
      .given(history)
      .when(create("human", true))
      .thenThrows(new AutomationExists({ automationId: "aut_1" })))
})

describe("UpdateAutomation", () => {
  it("renames", () =>
    spec(AutomationActor)
      .given([live])
      .when(update({ name: "Route" }), meta({ at: T2 }))
      .then([updated({ name: "Route" })]))

  it("describes anew", () =>
    spec(AutomationActor)
      .given([live])
      .when(update({ description: "Route new tasks" }), meta({ at: T2 }))
      .then([updated({ description: "Route new tasks" })]))

  it("replaces the steps", () =>
    spec(AutomationActor)
      .given([live])
      .when(update({ steps: [] }), meta({ at: T2 }))
      .then([updated({ steps: [] })]))

  it("replaces the trigger, and says so", () =>
    spec(AutomationActor)
      .given([live])
      .when(update({ trigger: onTaskUpdate }), meta({ at: T2 }))
      .then([updated({ trigger: onTaskUpdate, triggerReplaced: true })]))

  it.each([
    ["nothing", {}],
    ["the current values", { name: "Triage", description: "Sort new tasks", trigger: onNewTask, steps }]
  ] as const)("does nothing when given %s", (_, fields) =>
    spec(AutomationActor).given([live]).when(update(fields)).thenNothingHappened())

  it.each(missing)("does not find %s", (_, history) =>
    spec(AutomationActor).given(history).when(update({ name: "Route" })).thenThrows(notFound))

  it("puts a replaced trigger live from the update's time: what fired before does not run", () => {
    const history = [live, updated({ trigger: onTaskUpdate, triggerReplaced: true, at: T2 })]
    spec(AutomationActor)
      .given(history)
      .when(admit("arn_1", nodeEvent(T1, "node.updated")))
      .thenThrows(new AutomationIsDisabled({ automationId: "aut_1" }))
    spec(AutomationActor).given(history).when(admit("arn_2", nodeEvent(T2, "node.updated"))).then([admitted("arn_2")])
  })

  it("leaves the trigger live from when it was when other fields change", () =>
    spec(AutomationActor)
      .given([live, updated({ name: "Route", at: T2 })])
      .when(admit("arn_1", nodeEvent(T1)))
      .then([admitted("arn_1")]))
})

describe("the enable gate covers changes (spec 3.4, issue 22)", () => {
  const callAgent = [{ name: "Hire", stepType: "tool", config: { capability: "agent.create", input: { slug: "x", name: "X" } } }] as const
  const api: Trigger = { type: "api" }

  it.each([
    ["its steps", { steps: callAgent }, {}],
    ["its trigger", { trigger: api }, { triggerReplaced: true }],
    ["what a step calls", { steps: [{ ...steps[0], config: { url: "https://elsewhere.example.com" } }] }, {}],
    ["its trigger and steps", { trigger: api, steps: callAgent }, { triggerReplaced: true }]
  ] as const)("an AI origin changing %s of an enabled automation disables it until a person enables it", (_, fields, also) =>
    spec(AutomationActor)
      .given([live])
      .when(update(fields, "ai"), meta({ at: T2 }))
      .then([updated({ ...fields, ...also, origin: "ai" }), held(T2)]))

  it.each([
    ["renames", { name: "Route" }],
    ["re-describes", { description: "Route new tasks" }]
  ] as const)("an AI origin that only %s leaves it enabled: what runs did not change", (_, fields) =>
    spec(AutomationActor)
      .given([live])
      .when(update(fields, "ai"), meta({ at: T2 }))
      .then([updated({ ...fields, origin: "ai" })]))

  it("an AI origin changing the steps of a disabled automation holds nothing: it is off already", () =>
    spec(AutomationActor)
      .given([off])
      .when(update({ steps: callAgent }, "ai"), meta({ at: T2 }))
      .then([updated({ steps: callAgent, origin: "ai" })]))

  it.each([
    ["held by an AI's change", [live, updated({ steps: callAgent, origin: "ai" }), held(T2)]],
    // a log whose change was not held (what the revision check alone stops)
    ["changed by an AI, not held", [live, updated({ steps: callAgent, origin: "ai" })]]
  ] as const)("refuses a run of a revision nobody enabled: %s", (_, history) =>
    spec(AutomationActor)
      .given(history)
      .when(admit("arn_1", nodeEvent(T3)))
      .thenThrows(new AutomationIsDisabled({ automationId: "aut_1" })))

  it("held, it is enabled again only by a person, who its runs then act as", () => {
    const history = [live, updated({ steps: callAgent, origin: "ai" }), held(T2)]
    spec(AutomationActor).given(history).when(enable("ai")).thenThrows(new HumanRequired({ automationId: "aut_1" }))
    spec(AutomationActor).given(history).when(enable("human"), meta({ at: T3 })).then([enabled(T3)])
    spec(AutomationActor).given([...history, enabled(T3)]).when(admit("arn_1", nodeEvent(T3))).then([admitted("arn_1")])
  })

  it("enables anew an automation that is enabled with no enabler of its current revision", () =>
    spec(AutomationActor)
      .given([live, updated({ steps: callAgent, origin: "ai" })])
      .when(enable("human"), meta({ at: T3 }))
      .then([enabled(T3)]))

  /** Whom a run acts for after `history` (null: none starts). */
  const enabler = (history: ReadonlyArray<AutomationEvent>) => {
    const state = history.reduce(AutomationActor.evolve, AutomationActor.initialState)
    return state._tag === "Live" ? enablerOf(state) : "not live"
  }
  it.each([
    ["created enabled by its owner's session", [live], "u1"],
    ["created disabled", [off], null],
    ["created by an AI, enabled by a person", [created({ enabled: false, origin: "ai" }), enabled(T1)], "u3"],
    ["renamed by an AI", [live, updated({ name: "Route", origin: "ai" })], "u1"],
    ["rewritten by a person's session (u2) while enabled: theirs to answer for", [live, updated({ steps: callAgent })], "u2"],
    ["rewritten by a person while disabled", [off, updated({ steps: callAgent })], null],
    ["rewritten by an AI and held", [live, updated({ steps: callAgent, origin: "ai" }), held(T2)], null],
    ["held, then enabled by a person (u3)", [live, updated({ steps: callAgent, origin: "ai" }), held(T2), enabled(T3)], "u3"],
    ["disabled", [live, disabled(T1)], null],
    // events recorded before changes named their person: nobody is known to have enabled what followed
    ["enabled by an unrecorded person", [off, enabled(T1, null)], null],
    ["renamed by an unrecorded person", [live, new AutomationUpdated({ ...target, name: "Route", description: "Sort new tasks", trigger: onNewTask, steps, triggerReplaced: false, at: T2 })], null],
    ["rewritten by an unrecorded person", [live, new AutomationUpdated({ ...target, name: "Triage", description: "Sort new tasks", trigger: onNewTask, steps: callAgent, triggerReplaced: false, at: T2 })], null]
  ] as const)("runs act for the person who enabled the current revision: %s", (_, history, expected) =>
    expect(enabler(history)).toBe(expected))

  /** A state as stored before revisions and enablers were: the fields of the state the history folds to, without them. */
  const storedBefore = (history: ReadonlyArray<AutomationEvent>) => {
    const encoded = Schema.encodeSync(AutomationActor.state)(history.reduce(AutomationActor.evolve, AutomationActor.initialState)) as Record<string, unknown>
    const { revision: _, enabledBy: __, enabledRevision: ___, ...stored } = encoded
    return Schema.decodeUnknownSync(AutomationActor.state)(stored)
  }
  it.each([
    ["enabled at its creation and never changed since: its owner", [live], "u1"],
    ["enabled at its creation, renamed since", [live, new AutomationUpdated({ ...target, name: "Route", description: "Sort new tasks", trigger: onNewTask, steps, triggerReplaced: false, at: T2 })], null],
    ["enabled later", [off, enabled(T1, null)], null],
    ["disabled", [off], null]
  ] as const)("reads a state stored before enablers were as its events replay: %s", (_, history, expected) => {
    const state = storedBefore(history)
    expect(state._tag === "Live" ? enablerOf(state) : "not live").toBe(expected)
    expect(state._tag === "Live" ? enablerOf(state) : "not live").toBe(enabler(history))
  })
})

describe("DeleteAutomation", () => {
  it("deletes", () => spec(AutomationActor).given([live]).when(new DeleteAutomation(target)).then([deleted]))
})

describe("AdmitRun", () => {
  it("admits a run of what fired after the trigger went live", () =>
    spec(AutomationActor).given([live]).when(admit("arn_1", nodeEvent(T1))).then([admitted("arn_1")]))

  it("admits an API call of an automation with an API trigger", () =>
    spec(AutomationActor)
      .given([created({ trigger: { type: "api" } })])
      .when(admit("arn_1", { type: "api", at: T1, payload: { ticket: 7 } }))
      .then([admitted("arn_1")]))

  it.each([
    ["created disabled", [off]],
    ["disabled since", [live, disabled(T1)]]
  ] as const)("refuses a run of an automation %s", (_, history) =>
    spec(AutomationActor)
      .given(history)
      .when(admit("arn_1", nodeEvent(T2)))
      .thenThrows(new AutomationIsDisabled({ automationId: "aut_1" })))

  it("refuses what fired before the automation was enabled, and admits what fired after", () => {
    const history = [off, enabled(T2)]
    spec(AutomationActor)
      .given(history)
      .when(admit("arn_1", nodeEvent(T1)))
      .thenThrows(new AutomationIsDisabled({ automationId: "aut_1" }))
    spec(AutomationActor).given(history).when(admit("arn_2", nodeEvent(T2))).then([admitted("arn_2")])
  })

  it.each([
    ["an API call of an event automation", [live], { type: "api", at: T1, payload: null }, "event", "api"],
    ["a node event of a scheduled automation", [scheduled], nodeEvent(T1), "schedule", "event"],
    ["a tick of an event automation", [live], { type: "schedule", tick: T1 }, "event", "schedule"]
  ] as const)("refuses %s", (_, history, trigger, expected, got) =>
    spec(AutomationActor)
      .given(history)
      .when(admit("arn_1", trigger))
      .thenThrows(new TriggerMismatch({ automationId: "aut_1", expected, got })))

  it.each(missing)("does not find %s", (_, history) =>
    spec(AutomationActor).given(history).when(admit("arn_1", nodeEvent(T1))).thenThrows(notFound))
})

describe("schedule ticks", () => {
  it("admits the first tick", () =>
    spec(AutomationActor).given([scheduled]).when(tick(T1)).then([tickAdmitted(T1)]))

  it.each([
    ["the same tick", T2],
    ["an earlier tick", T1]
  ])("refuses %s as decided already", (_, at) =>
    spec(AutomationActor)
      .given([scheduled, tickAdmitted(T2), ended(T2)])
      .when(tick(at))
      .thenThrows(new TickAlreadyDecided({ automationId: "aut_1", tick: at })))

  it("skips a tick while the previous scheduled run is active", () =>
    spec(AutomationActor)
      .given([scheduled, tickAdmitted(T1)])
      .when(tick(T2))
      .then([new TickSkipped({ ...target, runId: `arn_${T2}`, tick: T2, activeRunId: `arn_${T1}` })]))

  it("counts a skipped tick as decided", () =>
    spec(AutomationActor)
      .given([scheduled, tickAdmitted(T1), new TickSkipped({ ...target, runId: `arn_${T2}`, tick: T2, activeRunId: `arn_${T1}` }), ended(T1)])
      .when(tick(T2))
      .thenThrows(new TickAlreadyDecided({ automationId: "aut_1", tick: T2 })))

  it("admits the next tick once the scheduled run ended", () => {
    spec(AutomationActor).given([scheduled, tickAdmitted(T1)]).when(new EndScheduledRun({ ...target, runId: `arn_${T1}` })).then([ended(T1)])
    spec(AutomationActor).given([scheduled, tickAdmitted(T1), ended(T1)]).when(tick(T2)).then([tickAdmitted(T2)])
  })

  it("ignores the end of a run that is not the active scheduled one", () =>
    spec(AutomationActor)
      .given([scheduled, tickAdmitted(T1)])
      .when(new EndScheduledRun({ ...target, runId: "arn_other" }))
      .thenNothingHappened())

  it("answers a driver's repeated request for the tick it was admitted for with nothing more", () =>
    spec(AutomationActor).given([scheduled, tickAdmitted(T1)]).when(tick(T1)).thenNothingHappened())

  it("re-enabled, runs the ticks from then on and none it missed while disabled", () => {
    const history = [scheduled, tickAdmitted(T1), ended(T1), disabled(T1), enabled(T3)]
    spec(AutomationActor)
      .given(history)
      .when(tick(T2))
      .thenThrows(new AutomationIsDisabled({ automationId: "aut_1" }))
    spec(AutomationActor).given(history).when(tick(T3)).then([tickAdmitted(T3)])
  })

  it("counts the ticks of a replaced schedule afresh", () =>
    spec(AutomationActor)
      .given([scheduled, tickAdmitted(T1), ended(T1), updated({ trigger: { ...hourly, cronExpression: "30 * * * *" }, triggerReplaced: true, at: T2 })])
      .when(tick(T3))
      .then([tickAdmitted(T3)]))
})

describe("automations projection", () => {
  const row = {
    automation_id: "aut_1",
    org_id: "o1",
    workspace_id: "w1",
    name: "Triage",
    description: "Sort new tasks",
    trigger_type: "event",
    entity_type: "Task",
    event_type: "node.created",
    trigger: onNewTask,
    steps,
    enabled: true,
    live_since: T0,
    origin: "human",
    run_as: runAs,
    created_at: T0,
    updated_at: T0,
    version: 1,
    revision: 1,
    enabled_by: "u1",
    enabled_revision: 1,
    last_tick: null,
    active_scheduled_run: null
  }

  it("holds an event automation, live since its creation, by the label and event it watches", () =>
    expect(projectedRows(AutomationActor, "automation:aut_1", [[live, T0]])).toEqual({ automations: [row] }))

  it("holds a disabled automation with no live time", () =>
    expect(projectedRows(AutomationActor, "automation:aut_1", [[live, T0], [disabled(T1), T1]])).toEqual({
      automations: [{ ...row, enabled: false, live_since: null, updated_at: T1, version: 2, enabled_by: null, enabled_revision: null }]
    }))

  it("moves the live time to a replaced trigger's update", () =>
    expect(
      projectedRows(AutomationActor, "automation:aut_1", [[live, T0], [updated({ trigger: onTaskUpdate, triggerReplaced: true }), T2]])
    ).toEqual({
      automations: [{ ...row, event_type: "node.updated", trigger: onTaskUpdate, live_since: T2, updated_at: T2, version: 2, revision: 2, enabled_by: "u2", enabled_revision: 2 }]
    }))

  it("holds an AI's change disabled, with the revision nobody enabled, tells the owner and records it for auditors", () =>
    expect(
      projectedRows(AutomationActor, "automation:aut_1", [[live, T0], [updated({ steps: [], origin: "ai" }), T2], [held(T2), T2]])
    ).toEqual({
      automations: [{ ...row, steps: [], enabled: false, live_since: null, origin: "ai", updated_at: T2, version: 3, revision: 2, enabled_by: null, enabled_revision: null }],
      audit_log: [
        expect.objectContaining({ invocation_id: "automation:aut_1#3#o1", kind: "security", event: "automation.held", org_id: "o1", workspace_id: "w1", detail: { automationId: "aut_1", revision: 2 } })
      ],
      notifications: [
        {
          notification_id: "aut_1:held:2",
          org_id: "o1",
          workspace_id: "w1",
          user_id: "u1",
          kind: "security",
          title: "An automation was changed and is disabled until a person enables it: Triage",
          body: expect.stringContaining("enable it"),
          subject: { automationId: "aut_1", revision: 2, changedBy: "u2" },
          created_at: T2,
          resolved_at: null,
          deep_link: null,
          emailed_at: null
        }
      ]
    }))

  it("records a skipped tick as a skipped run, and the schedule's last tick and active run", () =>
    expect(
      projectedRows(AutomationActor, "automation:aut_1", [
        [scheduled, T0],
        [tickAdmitted(T1), T1],
        [new TickSkipped({ ...target, runId: `arn_${T2}`, tick: T2, activeRunId: `arn_${T1}` }), T2]
      ])
    ).toEqual({
      automations: [
        {
          ...row,
          trigger_type: "schedule",
          entity_type: null,
          event_type: null,
          trigger: hourly,
          last_tick: T2,
          active_scheduled_run: `arn_${T1}`
        }
      ],
      automation_runs: [
        {
          run_id: `arn_${T2}`,
          automation_id: "aut_1",
          org_id: "o1",
          workspace_id: "w1",
          status: "skipped",
          trigger: { type: "schedule", tick: T2 },
          steps: [],
          error: { code: "previous_run_active", message: `the tick came while run arn_${T1} was still active` },
          created_at: T2,
          started_at: null,
          ended_at: T2
        }
      ]
    }))

  it("drops the row of a deleted automation", () =>
    expect(projectedRows(AutomationActor, "automation:aut_1", [[live, T0], [deleted, T4]])).toEqual({ automations: [] }))
})
