/**
 * The A2A task read model against real Postgres: an actor host on the embedded log projects the
 * a2atask actor's events (a reply waits for the projection), and the queries read them back. A
 * task through its life as tasks/get returns it (history clamped by historyLength), workspace
 * scoping, malformed ids not found without a query, the states a poller reads, and terminal tasks
 * refusing a cancel.
 */
import { Effect, Either } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { A2aTaskActor } from "../../actors/a2atask/actor.ts"
import {
  type A2aTaskCommand,
  CancelTask,
  CompleteTask,
  FailTask,
  ReceiveMessage,
  RejectTask,
  RequireInput,
  SubmitTask
} from "../../actors/a2atask/protocol.ts"
import { findTask, type TaskRecord, taskView } from "../../src/a2a/Queries.ts"
import { KeyManagement, noKeyManagement } from "../../src/marketplace/Envelope.ts"
import * as Db from "../../streams/Db.ts"
import { messagesOf, text } from "../support/a2aFixtures.ts"
import { hex } from "../support/env.ts"
import { startActorHost, type TestActorHost } from "../support/host.ts"

const PARTITIONS = 2

let actors: TestActorHost

const workspaceId = `wsp_${hex()}`
const contextId = `ctx_${hex()}`
const carol = "usr_carol"

const send = (taskId: string, command: A2aTaskCommand, at: string) =>
  Effect.runPromise(actors.host.send(A2aTaskActor, taskId, command, { commandId: randomUUID(), at, actor: `user:${carol}` }).pipe(Effect.either))

const read: TestActorHost["read"] = (effect) => actors.read(effect)
/** The task's wire view; these tasks were written in clear, so no key is needed to open them. */
const view = (record: TaskRecord, historyLength?: number) =>
  read(taskView(record, historyLength).pipe(Effect.provideService(KeyManagement, noKeyManagement), Effect.orDie))

/** Who and where a task of this file is: what it is submitted with, and its record then carries. */
const header = (taskId: string) => ({
  taskId,
  contextId,
  orgId: "org_a2a",
  workspaceId,
  userId: carol,
  apiKeyId: "aky_1",
  conversationId: `cnv_${contextId.slice(4)}`
})

const submit = (taskId: string, at: string) =>
  send(
    taskId,
    new SubmitTask({
      ...header(taskId),
      turnId: randomUUID(),
      runId: `tse_${taskId.slice(4)}`,
      message: { messageId: `${taskId}-ask`, parts: text("plan the release") }
    }),
    at
  )

beforeAll(async () => {
  actors = await startActorHost([A2aTaskActor], { partitions: PARTITIONS })
})

afterAll(() => actors.stop())

describe("a task through its life", () => {
  const taskId = `a2a_${hex()}`
  const message = messagesOf({ taskId, contextId })
  const ask = message("user", `${taskId}-ask`, "plan the release")
  const question = message("agent", "msg_q", "which branch?")
  const answer = message("user", "m-2", "main")
  const reply = message("agent", "msg_r", "released main")
  const artifact = { artifactId: "art_1", name: "response", parts: text("released main") }

  it("submitted, working under its run: found within its workspace, the caller's message its history", async () => {
    expect(Either.isRight(await submit(taskId, "2024-05-01T12:00:00.000Z"))).toBe(true)
    const record = await read(findTask(workspaceId, taskId))
    expect(record).toMatchObject({
      ...header(taskId),
      runId: `tse_${taskId.slice(4)}`,
      state: "working",
      statusMessage: null,
      history: [ask],
      artifacts: [],
      pendingQuestionId: null,
      createdAt: "2024-05-01T12:00:00.000Z",
      updatedAt: "2024-05-01T12:00:00.000Z"
    })
    expect(await view(record!)).toEqual({
      kind: "task",
      id: taskId,
      contextId,
      status: { state: "working", timestamp: "2024-05-01T12:00:00.000Z" },
      artifacts: [],
      history: [ask]
    })
    expect(await read(findTask("wsp_other", taskId))).toBeUndefined()
    expect(await read(findTask(workspaceId, `a2a_${hex()}`))).toBeUndefined()
  })

  it("waiting on a question: the question is its status message", async () => {
    await send(taskId, new RequireInput({ taskId, questionId: "qst_1", agentMessage: { messageId: "msg_q", parts: question.parts } }), "2024-05-01T12:00:02.000Z")
    const record = (await read(findTask(workspaceId, taskId)))!
    expect(record).toMatchObject({ state: "input-required", pendingQuestionId: "qst_1", statusMessage: question, history: [ask, question] })
    expect((await view(record)).status).toEqual({ state: "input-required", timestamp: "2024-05-01T12:00:02.000Z", message: question })
  })

  it("the caller's answer by another person is refused; by the task's person it resumes the task", async () => {
    const byDave = await send(taskId, new ReceiveMessage({ taskId, message: { messageId: "m-2", parts: text("main") }, userId: "usr_dave" }), "2024-05-01T12:00:03.000Z")
    expect(byDave).toEqual(Either.left(expect.objectContaining({ _tag: "TaskNotFound", taskId })))
    await send(taskId, new ReceiveMessage({ taskId, message: { messageId: "m-2", parts: text("main") }, userId: carol }), "2024-05-01T12:00:03.000Z")
    expect(await read(findTask(workspaceId, taskId))).toMatchObject({ state: "working", pendingQuestionId: null, statusMessage: null, history: [ask, question, answer] })
  })

  it("completed: the reply and its artifact; historyLength keeps the last messages", async () => {
    await send(taskId, new CompleteTask({ taskId, agentMessage: { messageId: "msg_r", parts: reply.parts }, artifact }), "2024-05-01T12:00:04.000Z")
    const record = (await read(findTask(workspaceId, taskId)))!
    expect(await view(record)).toEqual({
      kind: "task",
      id: taskId,
      contextId,
      status: { state: "completed", timestamp: "2024-05-01T12:00:04.000Z", message: reply },
      artifacts: [artifact],
      history: [ask, question, answer, reply]
    })
    expect((await view(record, 2)).history).toEqual([answer, reply])
    expect((await view(record, 4)).history).toEqual([ask, question, answer, reply])
    expect((await view(record, 10)).history).toEqual([ask, question, answer, reply])
    expect((await view(record, 0)).history).toEqual([])
  })

  it("terminal: a cancel is refused, and the turn's late report changes nothing", async () => {
    expect(await send(taskId, new CancelTask({ taskId, workspaceId }), "2024-05-01T12:00:05.000Z")).toEqual(
      Either.left(expect.objectContaining({ _tag: "TaskNotCancelable", taskId, state: "completed" }))
    )
    expect(Either.isRight(await send(taskId, new FailTask({ taskId, error: { code: "model_call_failed", message: "late" } }), "2024-05-01T12:00:06.000Z"))).toBe(true)
    expect(await read(findTask(workspaceId, taskId))).toMatchObject({ state: "completed", updatedAt: "2024-05-01T12:00:04.000Z" })
  })
})

describe("malformed ids", () => {
  it("are not found, without a query", async () => {
    // a Db with no connection: any query would fail
    const noDb = {} as Db.DbService
    for (const id of ["", "nope", "a2a_xyz", `a2a_${hex()}0`, `a2a_${hex().toUpperCase()}`, `ctx_${hex()}`, "'; select 1; --"]) {
      expect(await Effect.runPromise(Effect.provideService(findTask(workspaceId, id), Db.Db, noDb))).toBeUndefined()
    }
  })
})

describe("states, for pollers", () => {
  it("of each known task; unknown ids are left out", async () => {
    const canceled = `a2a_${hex()}`
    const failed = `a2a_${hex()}`
    const rejected = `a2a_${hex()}`
    const waiting = `a2a_${hex()}`
    for (const id of [canceled, failed, rejected, waiting]) await submit(id, "2024-05-01T13:00:00.000Z")
    await send(canceled, new CancelTask({ taskId: canceled, workspaceId }), "2024-05-01T13:00:01.000Z")
    await send(failed, new FailTask({ taskId: failed, error: { code: null, message: "Stream error" } }), "2024-05-01T13:00:02.000Z")
    await send(rejected, new RejectTask({ taskId: rejected, reason: "no such conversation" }), "2024-05-01T13:00:01.000Z")
    await send(waiting, new RequireInput({ taskId: waiting, questionId: "qst_w", agentMessage: { messageId: "msg_w", parts: text("which?") } }), "2024-05-01T13:00:02.000Z")

    const stateOf = async (id: string) => (await read(findTask(workspaceId, id)))?.state
    expect([await stateOf(canceled), await stateOf(failed), await stateOf(rejected), await stateOf(waiting)]).toEqual(["canceled", "failed", "rejected", "input-required"])

    expect((await read(findTask(workspaceId, failed)))!.statusMessage).toEqual({
      kind: "message",
      role: "agent",
      parts: text("Stream error"),
      messageId: `${failed}-failed`,
      taskId: failed,
      contextId
    })
    expect((await view((await read(findTask(workspaceId, canceled)))!)).status).toEqual({ state: "canceled", timestamp: "2024-05-01T13:00:01.000Z" })
  })

  it("a cancel from another workspace does not reach the task", async () => {
    const taskId = `a2a_${hex()}`
    await submit(taskId, "2024-05-01T14:00:00.000Z")
    expect(await send(taskId, new CancelTask({ taskId, workspaceId: "wsp_other" }), "2024-05-01T14:00:01.000Z")).toEqual(
      Either.left(expect.objectContaining({ _tag: "TaskNotFound", taskId }))
    )
    expect((await read(findTask(workspaceId, taskId)))?.state).toBe("working")
  })
})
