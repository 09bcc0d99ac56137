/**
 * The A2A task actor (`a2atask:<taskId>`) as decider specifications: a task submitted once and
 * working under its run from the start, the turn's reports (a question, working again, the end), the caller's answer by the task's person only,
 * cancels within the workspace; terminal tasks never change, and the turn's late reports on them
 * change nothing. Then the `a2a_tasks` rows its projection writes, and the state through JSON.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { A2aTaskActor } from "../../actors/a2atask/actor.ts"
import { TaskAlreadyExists, TaskNotAwaitingInput, TaskNotCancelable, TaskNotFound, TaskTerminal } from "../../actors/a2atask/errors.ts"
import {
  type A2aTaskEvent,
  TaskCanceled,
  TaskCompleted,
  TaskFailed,
  TaskInputRequired,
  TaskMessageReceived,
  TaskRejected,
  TaskSubmitted,
  TaskWorking
} from "../../actors/a2atask/events.ts"
import {
  type A2aTaskCommand,
  CancelTask,
  CompleteTask,
  FailTask,
  MarkWorking,
  ReceiveMessage,
  RejectTask,
  RequireInput,
  SubmitTask
} from "../../actors/a2atask/protocol.ts"
import { A2aTaskState } from "../../actors/a2atask/state.ts"
import { keyOf } from "../../actors/kernel.ts"
import { messagesOf, text } from "../support/a2aFixtures.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const T0 = "2024-05-01T12:00:00.000Z"
const T1 = "2024-05-01T12:01:00.000Z"
const T2 = "2024-05-01T12:02:00.000Z"
const T3 = "2024-05-01T12:03:00.000Z"

const taskId = "a2a_0123456789abcdef0123456789abcdef"
const contextId = "ctx_fedcba9876543210fedcba9876543210"
const carol = "usr_carol"
const dave = "usr_dave"
const at = (time: string) => meta({ at: time })

const message = messagesOf({ taskId, contextId })

const header = {
  taskId,
  contextId,
  orgId: "org_1",
  workspaceId: "wsp_1",
  userId: carol,
  apiKeyId: "aky_1",
  conversationId: "cnv_fedcba9876543210fedcba9876543210",
  turnId: "6f0c2b1e-8a7d-4c3b-9e21-5d4f3a2b1c0d"
}
const ask = message("user", "m-1", "plan the release")
const question = message("agent", "msg_q", "which branch? (main / next)")
const answer = message("user", "m-2", "main")
const reply = message("agent", "msg_r", "released main")
const artifact = { artifactId: "art_1", name: "response", parts: text("released main") }

const submit = new SubmitTask({ ...header, runId: "tse_1", message: { messageId: "m-1", parts: text("plan the release") } })
const markWorking = new MarkWorking({ taskId, runId: "tse_1" })
const requireInput = new RequireInput({ taskId, questionId: "qst_1", agentMessage: { messageId: "msg_q", parts: question.parts } })
const receive = new ReceiveMessage({ taskId, message: { messageId: "m-2", parts: text("main") }, userId: carol })
const complete = new CompleteTask({ taskId, agentMessage: { messageId: "msg_r", parts: reply.parts }, artifact })
const failure = { code: "model_call_failed", message: "the model did not answer" }
const fail = new FailTask({ taskId, error: failure })
const reject = new RejectTask({ taskId, reason: "no conversation cnv_x in this workspace" })
const cancel = new CancelTask({ taskId, workspaceId: "wsp_1" })

const submitted = new TaskSubmitted({ ...header, message: ask, submittedAt: T0 })
/** Working with the submission, in the same decision. */
const startedWorking = new TaskWorking({ taskId, runId: "tse_1", at: T0 })
/** Working once the run started, reported on its own (a log from before the submission carried the run). */
const working = new TaskWorking({ taskId, runId: "tse_1", at: T1 })
const inputRequired = new TaskInputRequired({ taskId, questionId: "qst_1", agentMessage: question, at: T1 })
const received = new TaskMessageReceived({ taskId, questionId: "qst_1", message: answer, at: T2 })
const completed = new TaskCompleted({ taskId, agentMessage: reply, artifact, at: T3 })
const failed = new TaskFailed({ taskId, error: failure, at: T3 })
const rejected = new TaskRejected({ taskId, reason: reject.reason, at: T1 })
const canceled = new TaskCanceled({ taskId, at: T2 })

const running: ReadonlyArray<A2aTaskEvent> = [submitted, working]
const waiting: ReadonlyArray<A2aTaskEvent> = [...running, inputRequired]
const terminals: ReadonlyArray<readonly [string, ReadonlyArray<A2aTaskEvent>]> = [
  ["completed", [...running, completed]],
  ["canceled", [...running, canceled]],
  ["failed", [...running, failed]],
  ["rejected", [submitted, rejected]]
]

const task = spec(A2aTaskActor)

type Case = readonly [name: string, given: ReadonlyArray<A2aTaskEvent>, command: A2aTaskCommand, time: string, outcome: ReadonlyArray<A2aTaskEvent> | unknown]

const run = (table: ReadonlyArray<Case>) => {
  for (const [name, given, command, time, outcome] of table) {
    it(name, () => {
      const when = task.given(given).when(command, at(time))
      if (Array.isArray(outcome)) when.then(outcome)
      else when.thenThrows(outcome as never)
    })
  }
}

const notFound = new TaskNotFound({ taskId })

describe("submitting", () =>
  run([
    ["records the task with the caller's message as an A2A message of it, working under its run", [], submit, T0, [submitted, startedWorking]],
    ["a second submission under the same id", running, submit, T1, new TaskAlreadyExists({ taskId })]
  ]))

it("a message keeps only the text of each part, whatever else the caller's part carried (the command drops the rest)", () => {
  const withMetadata = { messageId: "m-1", parts: [{ kind: "text" as const, text: "plan the release", metadata: { x: 1 } }] }
  const decision = A2aTaskActor.decide(A2aTaskActor.initialState, new SubmitTask({ ...header, runId: "tse_1", message: withMetadata }), at(T0))
  expect(Either.getOrThrow(decision)).toStrictEqual([submitted, startedWorking])
})

it("a message keeps its data and file parts as sent, without their metadata", () => {
  const data = { kind: "data" as const, data: { key: "value", nested: { array: [1, 2, 3] } } }
  const file = { kind: "file" as const, file: { name: "note.txt", mimeType: "text/plain", uri: "urn:svc:attachment:gen_1" } }
  const sent = { messageId: "m-1", parts: [...text("plan the release"), { ...data, metadata: { x: 1 } }, { ...file, metadata: { y: 2 } }] }
  const [event] = Either.getOrThrow(A2aTaskActor.decide(A2aTaskActor.initialState, new SubmitTask({ ...header, runId: "tse_1", message: sent }), at(T0)))
  expect((event as TaskSubmitted).message.parts).toStrictEqual([...text("plan the release"), data, file])
})

describe("the turn's reports", () =>
  run([
    ["working once the run starts, on a task submitted without its run (an older log)", [submitted], markWorking, T1, [working]],
    ["working again when it already works under its run from the submission: nothing", [submitted, startedWorking], markWorking, T1, []],
    ["working again after an unanswered question timed out", waiting, markWorking, T2, [new TaskWorking({ taskId, runId: "tse_1", at: T2 })]],
    ["working while working (the caller's answer came first): nothing", [...waiting, received], markWorking, T2, []],
    ["a question: input required", running, requireInput, T1, [inputRequired]],
    ["the same question again: nothing", waiting, requireInput, T1, []],
    [
      "another question while one waits: it is the one the next message answers",
      waiting,
      new RequireInput({ taskId, questionId: "qst_2", agentMessage: { messageId: "msg_q2", parts: text("when?") } }),
      T2,
      [new TaskInputRequired({ taskId, questionId: "qst_2", agentMessage: message("agent", "msg_q2", "when?"), at: T2 })]
    ],
    ["completed with the reply and its artifact", running, complete, T3, [completed]],
    ["completed after an answer", [...waiting, received], complete, T3, [completed]],
    ["failed", running, fail, T3, [failed]],
    ["failed without a stable code", running, new FailTask({ taskId, error: { code: null, message: "Stream error" } }), T3, [new TaskFailed({ taskId, error: { code: null, message: "Stream error" }, at: T3 })]],
    ["rejected: the turn could not start", [submitted, startedWorking], reject, T1, [rejected]],
    ["rejected, on a task submitted without its run (an older log)", [submitted], reject, T1, [rejected]],
    ...[markWorking, requireInput, complete, fail, reject].map((command): Case => [`${command._tag} on a task never submitted`, [], command, T1, notFound]),
    ...terminals.flatMap(([state, history]) =>
      [markWorking, requireInput, complete, fail, reject].map((command): Case => [`${command._tag} on a ${state} task: nothing (the turn raced its end)`, history, command, T3, []])
    )
  ]))

describe("the caller's next message", () =>
  run([
    ["answers the pending question: back to working", waiting, receive, T2, [received]],
    ["from another person: not found", waiting, new ReceiveMessage({ ...receive, userId: dave }), T2, notFound],
    ["from a caller with no person: not found", waiting, new ReceiveMessage({ ...receive, userId: "" }), T2, notFound],
    ["on a task never submitted", [], receive, T2, notFound],
    ["on a submitted task", [submitted], receive, T1, new TaskNotAwaitingInput({ taskId, state: "submitted" })],
    ["on a working task", running, receive, T1, new TaskNotAwaitingInput({ taskId, state: "working" })],
    ["twice: the question was answered", [...waiting, received], receive, T2, new TaskNotAwaitingInput({ taskId, state: "working" })],
    ...terminals.map(([state, history]): Case => [`on a ${state} task`, history, receive, T3, new TaskTerminal({ taskId, state: state as never })]),
    ["another person on a terminal task: still not found", [...running, completed], new ReceiveMessage({ ...receive, userId: dave }), T3, notFound]
  ]))

describe("canceling", () =>
  run([
    ["a task just submitted (its run not started yet)", [submitted, startedWorking], cancel, T2, [canceled]],
    ["a submitted task of an older log", [submitted], cancel, T2, [canceled]],
    ["a working task", running, cancel, T2, [canceled]],
    ["a task waiting for input", waiting, cancel, T2, [canceled]],
    ["from another workspace: not found", running, new CancelTask({ taskId, workspaceId: "wsp_2" }), T2, notFound],
    ["from another workspace, a terminal task: still not found", [...running, completed], new CancelTask({ taskId, workspaceId: "wsp_2" }), T3, notFound],
    ["a task never submitted", [], cancel, T2, notFound],
    ...terminals.map(([state, history]): Case => [`a ${state} task`, history, cancel, T3, new TaskNotCancelable({ taskId, state: state as never })])
  ]))

describe("evolve", () => {
  it("refuses a log that submits a task twice, speaks of one never submitted, or changes a terminal one", () => {
    const state = running.reduce(A2aTaskActor.evolve, A2aTaskActor.initialState)
    expect(() => A2aTaskActor.evolve(state, submitted)).toThrow(/exists/)
    expect(() => A2aTaskActor.evolve(A2aTaskActor.initialState, working)).toThrow(/never submitted/)
    expect(() => A2aTaskActor.evolve(A2aTaskActor.evolve(state, completed), canceled)).toThrow(/completed/)
  })

  it.effect("every state survives the trip through JSON (the actor_state read model)", () =>
    Effect.gen(function* () {
      const histories: ReadonlyArray<ReadonlyArray<A2aTaskEvent>> = [[], [submitted], running, waiting, [...waiting, received], ...terminals.map(([, h]) => h)]
      for (const history of histories) {
        const state = history.reduce(A2aTaskActor.evolve, A2aTaskActor.initialState)
        expect(yield* jsonRoundTrip(A2aTaskState, state)).toEqual(state)
      }
    })
  )
})

describe("projection", () => {
  const key = keyOf(A2aTaskActor, taskId)
  const row = {
    task_id: taskId,
    context_id: contextId,
    org_id: "org_1",
    workspace_id: "wsp_1",
    user_id: carol,
    api_key_id: "aky_1",
    conversation_id: header.conversationId,
    turn_id: header.turnId,
    run_id: null,
    state: "submitted",
    status_message: null,
    history: [ask],
    artifacts: [],
    pending_question_id: null,
    created_at: T0,
    updated_at: T0
  }
  const rows = (history: ReadonlyArray<A2aTaskEvent>) => projectedRows(A2aTaskActor, key, history.map((e) => [e, T0] as const)).a2a_tasks

  it("submitted: the caller's message is the history", () => expect(rows([submitted])).toEqual([row]))

  it("working: the run", () => expect(rows(running)).toEqual([{ ...row, state: "working", run_id: "tse_1", updated_at: T1 }]))

  it("submitted working under its run: the run, since the submission", () =>
    expect(rows([submitted, startedWorking])).toEqual([{ ...row, state: "working", run_id: "tse_1" }]))

  it("input required: the question is the status message and joins the history", () =>
    expect(rows(waiting)).toEqual([
      { ...row, state: "input-required", run_id: "tse_1", status_message: question, history: [ask, question], pending_question_id: "qst_1", updated_at: T1 }
    ]))

  it("the answer joins the history; working again, nothing pending", () =>
    expect(rows([...waiting, received])).toEqual([{ ...row, state: "working", run_id: "tse_1", history: [ask, question, answer], updated_at: T2 }]))

  it("completed: the reply is the status message, joins the history, and its artifact is the task's", () =>
    expect(rows([...waiting, received, completed])).toEqual([
      { ...row, state: "completed", run_id: "tse_1", status_message: reply, history: [ask, question, answer, reply], artifacts: [artifact], updated_at: T3 }
    ]))

  it("failed: an agent message with the error's text", () =>
    expect(rows([...running, failed])).toEqual([
      { ...row, state: "failed", run_id: "tse_1", status_message: message("agent", `${taskId}-failed`, failure.message), updated_at: T3 }
    ]))

  it("rejected: an agent message with the reason", () =>
    expect(rows([submitted, rejected])).toEqual([{ ...row, state: "rejected", status_message: message("agent", `${taskId}-rejected`, reject.reason), updated_at: T1 }]))

  it("canceled while waiting: no status message, nothing pending; the question stays in the history", () =>
    expect(rows([...waiting, canceled])).toEqual([{ ...row, state: "canceled", run_id: "tse_1", history: [ask, question], updated_at: T2 }]))
})
