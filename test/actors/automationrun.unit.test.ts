import { describe, expect, it } from "@effect/vitest"
import type { RunTrigger, Step } from "../../actors/automation/definition.ts"
import { AutomationRunActor } from "../../actors/automationrun/actor.ts"
import { AutomationRunNotFound, RunNotWaiting, StaleStep } from "../../actors/automationrun/errors.ts"
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
} from "../../actors/automationrun/events.ts"
import {
  AwaitApproval,
  AwaitInput,
  BeginStep,
  CompleteStep,
  CreateRun,
  FailStep,
  ProvideInput,
  ResolveStepApproval
} from "../../actors/automationrun/protocol.ts"
import { approvedCall, type Run, stepApprovalId } from "../../actors/automationrun/state.ts"
import { ApprovalExpired, ReceiptMismatch } from "../../actors/conversation/errors.ts"
import type { Json } from "../../actors/kernel.ts"
import { meta, projectedRows, spec } from "../support/decider.ts"

const T0 = "2024-05-01T10:00:00.000Z"
const T1 = "2024-05-01T11:00:00.000Z"
const T2 = "2024-05-01T12:00:00.000Z"
const T3 = "2024-05-01T13:00:00.000Z"
const EXPIRES = "2024-05-08T11:00:00.000Z"

const runId = "arn_1"
const steps: ReadonlyArray<Step> = [
  { name: "Classify", stepType: "prompt", config: { prompt: "Which team owns this task?" } },
  { name: "Approve", stepType: "human_input", config: { prompt: "Route it?" } },
  { name: "Notify", stepType: "webhook", config: { url: "https://hooks.example.com/tasks" } }
]
const trigger: RunTrigger = {
  type: "event",
  eventType: "node.created",
  nodeId: "n1",
  label: "Task",
  key: "node:n1",
  seq: 1,
  at: T0,
  properties: { title: "Write" },
  changes: null
}
const runAs = { userId: "u1", apiKeyId: null }
const run = { runId, automationId: "aut_1", orgId: "o1", workspaceId: "w1", trigger, steps, runAs }

const boom = { code: "webhook_failed", message: "503 from hooks.example.com" }

const createRun = (playbook: ReadonlyArray<Step> = steps) => new CreateRun({ ...run, steps: playbook })
const begin = (index: number, attempt = 1) => new BeginStep({ runId, index, attempt })
const complete = (index: number, next: number | null, attempt = 1, output: Json = { team: "ops" }) =>
  new CompleteStep({ runId, index, attempt, output, next })
const fail = (index: number, final: boolean, attempt = 1) => new FailStep({ runId, index, attempt, error: boom, final })
const awaitInput = (index = 1, attempt = 1) =>
  new AwaitInput({ runId, index, attempt, prompt: "Route it?", assignee: "u1", expiresAt: EXPIRES })
const provide = (workspaceId = "w1") => new ProvideInput({ runId, workspaceId, response: { approve: true }, respondent: "u2" })

const started = new RunStarted({ ...run, at: T0 })
const stepStarted = (index: number, attempt = 1, at = T1) =>
  new StepStarted({ runId, index, attempt, name: steps[index].name, stepType: steps[index].stepType, at })
const stepSucceeded = (index: number, next: number | null, attempt = 1, at = T1, output: Json = { team: "ops" }) =>
  new StepSucceeded({ runId, index, attempt, output, next, at })
const stepFailed = (index: number, final: boolean, attempt = 1, at = T1) => new StepFailed({ runId, index, attempt, error: boom, final, at })
const inputRequested = (index = 1, attempt = 1, at = T1) =>
  new InputRequested({ runId, index, attempt, prompt: "Route it?", assignee: "u1", expiresAt: EXPIRES, at })
const inputReceived = (index = 1, attempt = 1, at = T2) =>
  new InputReceived({ runId, index, attempt, response: { approve: true }, respondent: "u2", at })
const answer = { response: { approve: true }, respondent: "u2" }
const succeeded = (at = T1) => new RunSucceeded({ runId, at })

/** Step 0 done, step 1 (human input) begun. */
const atApproval = [started, stepStarted(0), stepSucceeded(0, 1), stepStarted(1)]
/** ... and waiting for a person. */
const waiting = [...atApproval, inputRequested()]

const stale = (index: number, attempt = 1) => new StaleStep({ runId, index, attempt })

describe("CreateRun", () => {
  it("starts the run with the playbook as it stands", () =>
    spec(AutomationRunActor).given([]).when(createRun(), meta({ at: T0 })).then([started]))

  it("does nothing when the run exists already", () =>
    spec(AutomationRunActor).given([started]).when(createRun()).thenNothingHappened())

  it("starts and ends a run of a blank playbook at once", () =>
    spec(AutomationRunActor)
      .given([])
      .when(createRun([]), meta({ at: T0 }))
      .then([new RunStarted({ ...run, steps: [], at: T0 }), succeeded(T0)]))
})

describe("BeginStep", () => {
  it("begins the first step", () =>
    spec(AutomationRunActor).given([started]).when(begin(0), meta({ at: T1 })).then([stepStarted(0)]))

  it("does nothing when the running attempt is begun again (a driver's retry)", () =>
    spec(AutomationRunActor).given([started, stepStarted(0)]).when(begin(0)).thenNothingHappened())

  it("begins another attempt after a failed one that was not final", () =>
    spec(AutomationRunActor)
      .given([started, stepStarted(0), stepFailed(0, false)])
      .when(begin(0, 2), meta({ at: T2 }))
      .then([stepStarted(0, 2, T2)]))

  it("lets a driver that took over begin a later attempt of a running step", () =>
    spec(AutomationRunActor)
      .given([started, stepStarted(0)])
      .when(begin(0, 2), meta({ at: T2 }))
      .then([stepStarted(0, 2, T2)]))

  it.each([
    ["a step that is not the next one", [started], 1, 1],
    ["a step already done", [started, stepStarted(0), stepSucceeded(0, 1)], 0, 2],
    ["a step jumped over", [started, stepStarted(0), stepSucceeded(0, 2)], 1, 1],
    ["an attempt lower than the latest", [started, stepStarted(0, 2)], 0, 1],
    ["the failed attempt again", [started, stepStarted(0), stepFailed(0, false)], 0, 1],
    ["a step waiting for input", waiting, 1, 2],
    ["a step of a failed run", [started, stepStarted(0), stepFailed(0, true), new RunFailed({ runId, index: 0, error: boom, at: T1 })], 0, 2],
    ["a step of a succeeded run", [...waiting, inputReceived(), stepSucceeded(1, null, 1, T2, answer), succeeded(T2)], 2, 1]
  ] as const)("refuses %s as stale", (_, history, index, attempt) =>
    spec(AutomationRunActor).given(history).when(begin(index, attempt)).thenThrows(stale(index, attempt)))

  it("does not find a run that was never created", () =>
    spec(AutomationRunActor).given([]).when(begin(0)).thenThrows(new AutomationRunNotFound({ runId })))
})

describe("CompleteStep", () => {
  it("records the output and the step to run next", () =>
    spec(AutomationRunActor)
      .given([started, stepStarted(0)])
      .when(complete(0, 1), meta({ at: T1 }))
      .then([stepSucceeded(0, 1)]))

  it("ends the run when nothing follows", () =>
    spec(AutomationRunActor)
      .given([...atApproval, stepSucceeded(1, 2), stepStarted(2)])
      .when(complete(2, null, 1, { status: 200 }), meta({ at: T2 }))
      .then([stepSucceeded(2, null, 1, T2, { status: 200 }), succeeded(T2)]))

  it("ends the run early when a branch says nothing follows", () =>
    spec(AutomationRunActor)
      .given([started, stepStarted(0)])
      .when(complete(0, null), meta({ at: T1 }))
      .then([stepSucceeded(0, null), succeeded()]))

  it("jumps forward over steps, which then do not run", () => {
    const history = [started, stepStarted(0), stepSucceeded(0, 2)]
    spec(AutomationRunActor).given([started, stepStarted(0)]).when(complete(0, 2), meta({ at: T1 })).then([stepSucceeded(0, 2)])
    spec(AutomationRunActor).given(history).when(begin(2), meta({ at: T1 })).then([stepStarted(2)])
  })

  it.each([
    ["itself", 0],
    ["an earlier step", -1],
    ["a step past the end", 3]
  ])("refuses %s as the next step", (_, next) =>
    spec(AutomationRunActor).given([started, stepStarted(0)]).when(complete(0, next)).thenThrows(stale(0)))

  it("refuses a backward jump from a later step", () =>
    spec(AutomationRunActor).given([...atApproval, stepSucceeded(1, 2), stepStarted(2)]).when(complete(2, 0)).thenThrows(stale(2)))

  it.each([
    ["a step not begun", [started], 0, 1],
    ["a step completed already", [started, stepStarted(0), stepSucceeded(0, 1)], 0, 1],
    ["the attempt of a driver that was taken over", [started, stepStarted(0), stepStarted(0, 2)], 0, 1],
    ["a failed attempt", [started, stepStarted(0), stepFailed(0, false)], 0, 1]
  ] as const)("refuses %s as stale", (_, history, index, attempt) =>
    spec(AutomationRunActor).given(history).when(complete(index, 1, attempt)).thenThrows(stale(index, attempt)))
})

describe("FailStep", () => {
  it("records a failed attempt that is not final, and the run goes on", () =>
    spec(AutomationRunActor).given([started, stepStarted(0)]).when(fail(0, false), meta({ at: T1 })).then([stepFailed(0, false)]))

  it("fails the run with the step's error when the attempt is final", () =>
    spec(AutomationRunActor)
      .given([started, stepStarted(0), stepFailed(0, false), stepStarted(0, 2, T2)])
      .when(fail(0, true, 2), meta({ at: T2 }))
      .then([stepFailed(0, true, 2, T2), new RunFailed({ runId, index: 0, error: boom, at: T2 })]))

  it.each([
    ["a step not begun", [started], 0, 1],
    ["the attempt of a driver that was taken over", [started, stepStarted(0), stepStarted(0, 2)], 0, 1],
    ["an attempt failed already", [started, stepStarted(0), stepFailed(0, false)], 0, 1]
  ] as const)("refuses %s as stale", (_, history, index, attempt) =>
    spec(AutomationRunActor).given(history).when(fail(index, true, attempt)).thenThrows(stale(index, attempt)))

  it("lets a step waiting for input be tried again after a failure that is not final", () =>
    spec(AutomationRunActor)
      .given([...waiting, stepFailed(1, false, 1, T2)])
      .when(begin(1, 2), meta({ at: T3 }))
      .then([stepStarted(1, 2, T3)]))
})

describe("human input", () => {
  it("waits for a person", () =>
    spec(AutomationRunActor).given(atApproval).when(awaitInput(), meta({ at: T1 })).then([inputRequested()]))

  it("does nothing when the same wait is asked again (a driver resuming)", () =>
    spec(AutomationRunActor).given(waiting).when(awaitInput()).thenNothingHappened())

  it("refuses a wait for a stale attempt", () =>
    spec(AutomationRunActor).given(atApproval).when(awaitInput(1, 0)).thenThrows(stale(1, 0)))

  it("takes the answer as the step's output and goes on to the next step", () =>
    spec(AutomationRunActor)
      .given(waiting)
      .when(provide(), meta({ at: T2 }))
      .then([inputReceived(), stepSucceeded(1, 2, 1, T2, answer)]))

  it("ends the run when the step waiting was the last", () => {
    const last = steps.slice(0, 2)
    spec(AutomationRunActor)
      .given([new RunStarted({ ...run, steps: last, at: T0 }), stepStarted(0), stepSucceeded(0, 1), stepStarted(1), inputRequested()])
      .when(provide(), meta({ at: T2 }))
      .then([inputReceived(), stepSucceeded(1, null, 1, T2, answer), succeeded(T2)])
  })

  it.each([
    ["a running step", atApproval],
    ["an answered step", [...waiting, inputReceived(), stepSucceeded(1, 2, 1, T2, answer)]],
    ["an ended run", [started, stepStarted(0), stepSucceeded(0, null), succeeded()]]
  ] as const)("refuses an answer to %s", (_, history) =>
    spec(AutomationRunActor).given(history).when(provide()).thenThrows(new RunNotWaiting({ runId })))

  it.each([
    ["a run of another workspace", waiting, "w2"],
    ["a run that was never created", [], "w1"]
  ] as const)("does not find %s", (_, history, workspaceId) =>
    spec(AutomationRunActor).given(history).when(provide(workspaceId)).thenThrows(new AutomationRunNotFound({ runId })))
})

/** A playbook whose second step calls a capability that needs approval. */
const cleanup: ReadonlyArray<Step> = [steps[0], { name: "Delete", stepType: "tool", config: { capability: "node.delete", input: { nodeId: "{{trigger.nodeId}}" } } }, steps[2]]
const cleanupStarted = new RunStarted({ ...run, steps: cleanup, at: T0 })
const deleteStarted = (attempt = 1, at = T1) => new StepStarted({ runId, index: 1, attempt, name: "Delete", stepType: "tool", at })
const parkedCall = { capability: "node.delete", input: { nodeId: "n1" }, approver: "u1", expiresAt: EXPIRES }
const awaitApproval = (attempt = 1) => new AwaitApproval({ runId, index: 1, attempt, ...parkedCall })
const approvalRequested = (attempt = 1, at = T1) => new ApprovalRequested({ runId, index: 1, attempt, ...parkedCall, at })
/** The receipt the shell signs for a decision on the parked call (the decider checks its claims, not its signature). */
const stepReceipt = (decision: "approved" | "denied", decidedBy = "u1", decidedAt = T2) => ({
  version: "svc-approval-receipt-v1" as const,
  approvalId: stepApprovalId(runId, 1, 1),
  orgId: "o1",
  workspaceId: "w1",
  capability: "node.delete",
  inputSha256: "0".repeat(64),
  askedBy: "u1",
  decidedBy,
  decision,
  decidedAt,
  keyId: "k1",
  signature: "sig"
})
const resolveApproval = (decision: "approved" | "denied", userId = "u1", workspaceId = "w1", note: string | null = null, receipt = stepReceipt(decision, userId)) =>
  new ResolveStepApproval({ runId, workspaceId, decision, note, userId, receipt })
const approvalResolved = (decision: "approved" | "denied", at = T2, note: string | null = null) =>
  new ApprovalResolved({ runId, index: 1, attempt: 1, decision, note, at, orgId: "o1", receipt: stepReceipt(decision, "u1", at) })
const denial = { code: "approval_denied", message: "node.delete was denied by the person the run acts for: not this one" }
const deleted = { nodeId: "n1", deleted: true }

/** Step 0 done, the tool step needing approval begun. */
const atDelete = [cleanupStarted, stepStarted(0), stepSucceeded(0, 1), deleteStarted()]
/** ... and its call parked. */
const parked = [...atDelete, approvalRequested()]
const approved = [...parked, approvalResolved("approved")]

const fold = (history: ReadonlyArray<AutomationRunEvent>) => history.reduce(AutomationRunActor.evolve, AutomationRunActor.initialState) as Run

describe("a call that needs approval", () => {
  it("parks for the person the run acts for, and the run waits", () => {
    spec(AutomationRunActor).given(atDelete).when(awaitApproval(), meta({ at: T1 })).then([approvalRequested()])
    expect(fold(parked)).toMatchObject({ status: "waiting", cursor: 1 })
  })

  it("does nothing when the same call is parked again (a driver resuming)", () =>
    spec(AutomationRunActor).given(parked).when(awaitApproval()).thenNothingHappened())

  it("refuses a park for a stale attempt", () =>
    spec(AutomationRunActor).given(atDelete).when(awaitApproval(0)).thenThrows(stale(1, 0)))

  it("approved by that person before it expires: the same attempt runs again, to make the call", () => {
    spec(AutomationRunActor).given(parked).when(resolveApproval("approved"), meta({ at: T2 })).then([approvalResolved("approved")])
    expect(fold(approved)).toMatchObject({ status: "running", cursor: 1, timeline: [{ index: 0 }, { index: 1, attempt: 1, status: "running" }] })
  })

  it("the approved attempt records the call's output, and the run goes on", () =>
    spec(AutomationRunActor)
      .given(approved)
      .when(complete(1, 2, 1, deleted), meta({ at: T3 }))
      .then([stepSucceeded(1, 2, 1, T3, deleted)]))

  it("a later attempt after the approved call failed makes the call with the approved input, unasked", () =>
    expect(approvedCall(fold([...approved, stepFailed(1, false, 1, T3), deleteStarted(2, T3)]), 1)).toEqual({
      ...parkedCall,
      requestedAt: T1,
      decision: "approved",
      note: null,
      resolvedAt: T2,
      receipt: stepReceipt("approved")
    }))

  it.each([
    ["another decision", { decision: "denied" as const }],
    ["another time", { decidedAt: T3 }],
    ["another attempt", { approvalId: stepApprovalId(runId, 1, 2) }],
    ["another capability", { capability: "node.update" }],
    ["another approver", { decidedBy: "u2" }]
  ])("refuses a receipt that names %s than the decision it comes with: nothing recorded", (_, claim) =>
    spec(AutomationRunActor)
      .given(parked)
      .when(resolveApproval("approved", "u1", "w1", null, { ...stepReceipt("approved"), ...claim }), meta({ at: T2 }))
      .thenThrows(new ReceiptMismatch({ approvalId: stepApprovalId(runId, 1, 1) })))

  it("nothing is approved before the person answers, nor by a denial", () => {
    expect(approvedCall(fold(parked), 1)).toBeUndefined()
    expect(approvedCall(fold([...parked, approvalResolved("denied")]), 1)).toBeUndefined()
  })

  it("denied: the step and the run fail with approval_denied, the call never made", () =>
    spec(AutomationRunActor)
      .given(parked)
      .when(resolveApproval("denied", "u1", "w1", "not this one"), meta({ at: T2 }))
      .then([
        approvalResolved("denied", T2, "not this one"),
        new StepFailed({ runId, index: 1, attempt: 1, error: denial, final: true, at: T2 }),
        new RunFailed({ runId, index: 1, error: denial, at: T2 })
      ]))

  it.each([
    ["by another person of the workspace", "u2", T2],
    ["once it expired", "u1", EXPIRES]
  ] as const)("refuses an answer %s as chat does (approval_expired)", (_, userId, at) =>
    spec(AutomationRunActor).given(parked).when(resolveApproval("approved", userId), meta({ at })).thenThrows(new ApprovalExpired({ approvalId: runId })))

  it.each([
    ["a running step", atDelete],
    ["a call approved already", approved],
    ["a step waiting for input", waiting],
    ["a run the denial ended", [...parked, approvalResolved("denied"), stepFailed(1, true, 1, T2), new RunFailed({ runId, index: 1, error: boom, at: T2 })]]
  ] as const)("refuses a decision on %s: it waits for no approval", (_, history) =>
    spec(AutomationRunActor).given(history).when(resolveApproval("approved")).thenThrows(new RunNotWaiting({ runId })))

  it("refuses input to a parked call: it is answered by approving it", () =>
    spec(AutomationRunActor).given(parked).when(provide()).thenThrows(new RunNotWaiting({ runId })))

  it.each([
    ["a run of another workspace", parked, "w2"],
    ["a run that was never created", [], "w1"]
  ] as const)("does not find %s", (_, history, workspaceId) =>
    spec(AutomationRunActor).given(history).when(resolveApproval("approved", "u1", workspaceId)).thenThrows(new AutomationRunNotFound({ runId })))

  it("begins no attempt after a final failure heard before the run's end (a driver hears one event at a time)", () =>
    spec(AutomationRunActor).given([...parked, approvalResolved("denied"), stepFailed(1, true, 1, T2)]).when(begin(1, 2)).thenThrows(stale(1, 2)))
})

describe("projections", () => {
  const key = `automation_run:${runId}`
  const history: ReadonlyArray<readonly [AutomationRunEvent, string]> = [
    [started, T0],
    [stepStarted(0), T1],
    [stepSucceeded(0, 1), T1],
    [stepStarted(1), T1],
    [inputRequested(), T1]
  ]
  const classify = {
    index: 0,
    name: "Classify",
    stepType: "prompt",
    status: "succeeded",
    attempt: 1,
    startedAt: T1,
    endedAt: T1,
    output: { team: "ops" },
    error: null,
    input: null
  }
  const approve = {
    index: 1,
    name: "Approve",
    stepType: "human_input",
    status: "waiting",
    attempt: 1,
    startedAt: T1,
    endedAt: null,
    output: null,
    error: null,
    input: { prompt: "Route it?", assignee: "u1", expiresAt: EXPIRES, requestedAt: T1 }
  }
  const runRow = {
    run_id: runId,
    automation_id: "aut_1",
    org_id: "o1",
    workspace_id: "w1",
    status: "waiting",
    trigger,
    steps: [classify, approve],
    error: null,
    created_at: T0,
    started_at: T0,
    ended_at: null
  }
  const notice = {
    notification_id: `${runId}:1:1`,
    org_id: "o1",
    workspace_id: "w1",
    user_id: "u1",
    kind: "run",
    title: "An automation waits for your input: Approve",
    body: "Route it?",
    subject: { automationId: "aut_1", runId, index: 1 },
    created_at: T1,
    resolved_at: null,
    deep_link: null,
    emailed_at: null
  }

  it("holds the run with its timeline, and the notice of the input it waits for", () => {
    const rows = projectedRows(AutomationRunActor, key, history)
    expect(rows.automation_runs).toEqual([runRow])
    expect(rows.notifications).toEqual([notice])
  })

  it("resolves the notice once answered, and the run succeeds", () => {
    const rows = projectedRows(AutomationRunActor, key, [
      ...history,
      [inputReceived(), T2],
      [stepSucceeded(1, null, 1, T2, answer), T2],
      [succeeded(T2), T2]
    ])
    expect(rows.notifications).toEqual([{ ...notice, resolved_at: T2 }])
    expect(rows.automation_runs).toEqual([
      { ...runRow, status: "succeeded", ended_at: T2, steps: [classify, { ...approve, status: "succeeded", endedAt: T2, output: answer }] }
    ])
  })

  it("resolves the notice when the wait fails (it expired)", () =>
    expect(projectedRows(AutomationRunActor, key, [...history, [stepFailed(1, true, 1, T2), T2]]).notifications).toEqual([
      { ...notice, resolved_at: T2 }
    ]))

  it("records every attempt, and a failed run's error with its step", () =>
    expect(
      projectedRows(AutomationRunActor, key, [
        [started, T0],
        [stepStarted(0), T1],
        [stepFailed(0, false), T1],
        [stepStarted(0, 2, T2), T2],
        [stepFailed(0, true, 2, T2), T2],
        [new RunFailed({ runId, index: 0, error: boom, at: T2 }), T2]
      ]).automation_runs
    ).toEqual([
      {
        ...runRow,
        status: "failed",
        steps: [
          { ...classify, status: "failed", endedAt: T1, output: null, error: boom },
          { ...classify, status: "failed", attempt: 2, startedAt: T2, endedAt: T2, output: null, error: boom }
        ],
        error: { ...boom, step: "Classify" },
        ended_at: T2
      }
    ]))

  it("ends an attempt left open when a driver that took over begins the next", () =>
    expect(
      projectedRows(AutomationRunActor, key, [
        [started, T0],
        [stepStarted(0), T1],
        [stepStarted(0, 2, T2), T2]
      ]).automation_runs[0].steps
    ).toEqual([
      { ...classify, status: "failed", endedAt: T2, output: null, error: { code: "attempt_interrupted", message: "its node stopped; the next attempt took over" } },
      { ...classify, status: "running", attempt: 2, startedAt: T2, endedAt: null, output: null, error: null }
    ]))

  describe("of a call parked for approval", () => {
    const parkedHistory: ReadonlyArray<readonly [AutomationRunEvent, string]> = parked.map((event, i) => [event, i === 0 ? T0 : T1])
    const approvalNotice = {
      ...notice,
      title: "An automation waits for your approval: Delete",
      body: 'node.delete {"nodeId":"n1"}'
    }
    const approval = { ...parkedCall, requestedAt: T1, decision: null, note: null, resolvedAt: null }
    const deleteRecord = { ...approve, name: "Delete", stepType: "tool", input: null, approval }

    it("shows the call on the run's step, and tells the person the run acts for", () => {
      const rows = projectedRows(AutomationRunActor, key, parkedHistory)
      expect(rows.automation_runs).toEqual([{ ...runRow, trigger, steps: [classify, deleteRecord] }])
      expect(rows.notifications).toEqual([approvalNotice])
    })

    it("resolves the notice when approved, and keeps that time when the call then fails", () => {
      const rows = projectedRows(AutomationRunActor, key, [...parkedHistory, [approvalResolved("approved"), T2], [stepFailed(1, false, 1, T3), T3]])
      expect(rows.notifications).toEqual([{ ...approvalNotice, resolved_at: T2 }])
      expect(rows.automation_runs[0].steps).toEqual([
        classify,
        { ...deleteRecord, status: "failed", endedAt: T3, error: boom, approval: { ...approval, decision: "approved", resolvedAt: T2, receipt: stepReceipt("approved") } }
      ])
    })

    it("names the capability and the decision in the audit log, never the call's input", () => {
      const audit = projectedRows(AutomationRunActor, key, [...parkedHistory, [approvalResolved("denied"), T2]]).audit_log
      expect(audit.slice(-2).map((row) => [row.event, row.detail])).toEqual([
        ["automation_run.approval_requested", { automationId: "aut_1", runId, step: "Delete", index: 1, attempt: 1, capability: "node.delete" }],
        ["automation_run.approval_resolved", { automationId: "aut_1", runId, step: "Delete", index: 1, attempt: 1, decision: "denied" }]
      ])
    })
  })

  it("writes each playbook event to the organization audit log, without a step's output", () => {
    const audit = projectedRows(AutomationRunActor, key, history).audit_log
    expect(audit.map((row) => [row.event, row.kind, row.surface, row.org_id, row.workspace_id, row.user_id])).toEqual(
      ["automation_run.started", "automation_run.step_started", "automation_run.step_succeeded", "automation_run.step_started", "automation_run.input_requested"].map(
        (event) => [event, "playbook", "playbook", "o1", "w1", "u1"]
      )
    )
    expect(audit.map((row) => row.detail)).toEqual([
      { automationId: "aut_1", runId, trigger: { type: "event", eventType: "node.created", nodeId: "n1" } },
      { automationId: "aut_1", runId, step: "Classify", index: 0, attempt: 1 },
      { automationId: "aut_1", runId, step: "Classify", index: 0, attempt: 1 },
      { automationId: "aut_1", runId, step: "Approve", index: 1, attempt: 1 },
      { automationId: "aut_1", runId, step: "Approve", index: 1, attempt: 1 }
    ])
  })
})
