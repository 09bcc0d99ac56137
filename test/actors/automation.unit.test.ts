import { describe, expect, it } from "@effect/vitest"
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
const update = (fields: Omit<ConstructorParameters<typeof UpdateAutomation>[0], keyof typeof target>) =>
  new UpdateAutomation({ ...target, ...fields })
const updated = (fields: Partial<ConstructorParameters<typeof AutomationUpdated>[0]>) =>
  new AutomationUpdated({ ...target, name: "Triage", description: "Sort new tasks", trigger: onNewTask, steps, triggerReplaced: false, at: T2, ...fields })
const enabled = (at: string) => new AutomationEnabled({ ...target, at })
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
      .when(new EnableAutomation({ ...target, origin: "human" }), meta({ at: T1 }))
      .then([enabled(T1)]))

  it.each([
    ["disabled", [off]],
    ["enabled", [live]]
  ] as const)("refuses an AI origin enabling an automation that is %s", (_, history) =>
    spec(AutomationActor)
      .given(history)
      .when(new EnableAutomation({ ...target, origin: "ai" }))
      .thenThrows(new HumanRequired({ automationId: "aut_1" })))

  it("does nothing when a person enables an enabled automation", () =>
    spec(AutomationActor)
      .given([live])
      .when(new EnableAutomation({ ...target, origin: "human" }))
      .thenNothingHappened())

  it("disables an enabled automation, whoever asks", () =>
    spec(AutomationActor).given([live]).when(new DisableAutomation(target), meta({ at: T1 })).then([disabled(T1)]))

  it("does nothing when a disabled automation is disabled", () =>
    spec(AutomationActor).given([live, disabled(T1)]).when(new DisableAutomation(target)).thenNothingHappened())

  it.each(missing)("does not find %s to enable, disable or delete", (_, history) => {
    spec(AutomationActor).given(history).when(new EnableAutomation({ ...target, origin: "human" })).thenThrows(notFound)
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
    last_tick: null,
    active_scheduled_run: null
  }

  it("holds an event automation, live since its creation, by the label and event it watches", () =>
    expect(projectedRows(AutomationActor, "automation:aut_1", [[live, T0]])).toEqual({ automations: [row] }))

  it("holds a disabled automation with no live time", () =>
    expect(projectedRows(AutomationActor, "automation:aut_1", [[live, T0], [disabled(T1), T1]])).toEqual({
      automations: [{ ...row, enabled: false, live_since: null, updated_at: T1, version: 2 }]
    }))

  it("moves the live time to a replaced trigger's update", () =>
    expect(
      projectedRows(AutomationActor, "automation:aut_1", [[live, T0], [updated({ trigger: onTaskUpdate, triggerReplaced: true }), T2]])
    ).toEqual({
      automations: [{ ...row, event_type: "node.updated", trigger: onTaskUpdate, live_since: T2, updated_at: T2, version: 2 }]
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
