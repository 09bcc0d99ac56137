/**
 * tasks/get from the owner's memory (issue 24, docs/decisions.md): on the node that owns the
 * task's partition (here the only node, on the embedded log) tasks/get answers from the task
 * actor's cached state, with no statement on the task's read model, and answers what the read
 * model's row would give, history clamp included; a read right after a write sees it; another
 * person or workspace still gets -32001; and a read that must see a position the owner's memory
 * does not hold is not answered from it.
 */
import * as Envelope from "../../src/marketplace/Envelope.ts"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { A2aTaskActor } from "../../actors/a2atask/actor.ts"
import { keyOf } from "../../actors/kernel.ts"
import { findTask, taskView } from "../../src/a2a/Queries.ts"
import { loadConfig } from "../../src/platform/Config.ts"
import { Db } from "../../streams/Db.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { addPerson, bootstrapPlace, cliLogin } from "../support/people.ts"
import { otherWorkspaceWithKey } from "../support/places.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

let node: TestNode
/** Every statement the node's pool sent, while `capturing`. */
const statements: Array<string> = []
let capturing = false

beforeAll(async () => {
  node = await startTestNode({ assistant: { ...loadConfig({}).assistant, chatRateLimitPerMinute: 100_000 } })
  // postgres.js reads its `debug` option as each statement is sent
  ;(node.db.sql.options as { debug?: unknown }).debug = (_connection: number, query: string) => {
    if (capturing) statements.push(query)
  }
})
afterAll(async () => {
  await node?.stop()
})

/** The statements the node sends while `run` runs that read the A2A task read model (the projection's writes to it are not reads). */
const taskReadsDuring = async <A>(run: () => Promise<A>): Promise<{ readonly result: A; readonly reads: ReadonlyArray<string> }> => {
  statements.length = 0
  capturing = true
  try {
    const result = await run()
    return { result, reads: statements.filter((statement) => /^\s*select\b[\s\S]*\ba2a_tasks\b/i.test(statement)) }
  } finally {
    capturing = false
  }
}

const rpc = async (method: string, params: unknown, options: { readonly key?: string; readonly headers?: Record<string, string> } = {}) => {
  const response = await fetch(`${node.baseUrl}/a2a`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${options.key ?? node.bootstrap.workspaceKey}`, ...options.headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
  })
  expect(response.status).toBe(200)
  return (await response.json()) as { result?: any; error?: { code: number; message: string; data?: any } }
}

const send = async (text: string, extra: Record<string, unknown> = {}, key?: string) => {
  const answer = await rpc("message/send", { message: { kind: "message", role: "user", messageId: randomUUID(), parts: [{ kind: "text", text }], ...extra } }, { key })
  expect(answer.error, JSON.stringify(answer.error)).toBeUndefined()
  return answer.result as { id: string; contextId: string; status: { state: string }; history: Array<{ role: string }> }
}

/** The wire Task the read model's row gives, once the read model holds every acknowledged write. */
const fromReadModel = async (taskId: string, historyLength?: number) => {
  const { workspaceId } = await bootstrapPlace(node)
  const record = await Effect.runPromise(Effect.provideService(findTask(workspaceId, taskId), Db, node.db))
  return record === undefined ? undefined : Effect.runPromise(taskView(record, historyLength).pipe(Effect.provide(Envelope.layer(node.config.authTokenEncryptionKey)), Effect.provideService(Db, node.db)))
}

describe("tasks/get on the owning node", () => {
  it("answers from the task actor's state: no statement on the read model, the same Task as its row", async () => {
    const task = await send("hello")
    expect(task.status.state).toBe("completed")
    const { result: answers, reads } = await taskReadsDuring(async () => {
      const all: Array<unknown> = []
      for (let i = 0; i < 10; i++) all.push((await rpc("tasks/get", { id: task.id })).result)
      all.push((await rpc("tasks/get", { id: task.id, historyLength: 1 })).result)
      all.push((await rpc("tasks/get", { id: task.id, historyLength: 0 })).result)
      return all
    })
    expect(reads).toEqual([])
    const whole = await fromReadModel(task.id)
    expect(whole?.history.map((message) => message.role)).toEqual(["user", "agent"])
    for (const answer of answers.slice(0, 10)) expect(answer).toEqual(whole)
    expect(answers[10]).toEqual(await fromReadModel(task.id, 1))
    expect(answers[11]).toEqual({ ...whole, history: [] })
  })

  it("a read right after a write sees it, from memory: the answer to a question, then the task completed", async () => {
    const asked = await send("/ask Pick one | red | blue")
    expect(asked.status.state).toBe("input-required")
    const { result, reads } = await taskReadsDuring(async () => {
      const before = (await rpc("tasks/get", { id: asked.id })).result
      // the answer reads the task too (whose question it answers), then the turn completes it
      const answered = await send("red", { taskId: asked.id, contextId: asked.contextId })
      const after = (await rpc("tasks/get", { id: asked.id })).result
      return { before, answered, after }
    })
    expect(reads).toEqual([])
    expect(result.before.status.state).toBe("input-required")
    expect(result.answered.status.state).toBe("completed")
    expect(result.after.status.state).toBe("completed")
    expect(result.after.history.map((message: { role: string }) => message.role)).toEqual(["user", "agent", "user", "agent"])
    expect(result.after).toEqual(await fromReadModel(asked.id))
  })

  it("another person of the workspace, and another workspace, still get -32001", async () => {
    const task = await send("hello")
    const colleague = await cliLogin(node, await addPerson(node, "peek-colleague", { org: "member", workspace: "member" }))
    const slug = `peek-${randomUUID().slice(0, 8)}`
    const { key: stranger } = await otherWorkspaceWithKey(node, {
      workspace: { slug, workspaceId: `wsp_peek_${randomUUID().slice(0, 8)}`, name: slug },
      person: "peek-stranger",
      workspaceRole: "member",
      keyName: "peek stranger"
    })
    // the task is cached: its owner reads it from memory
    expect((await rpc("tasks/get", { id: task.id })).result.id).toBe(task.id)
    const { result, reads } = await taskReadsDuring(async () => [
      await rpc("tasks/get", { id: task.id }, { key: colleague }),
      await rpc("tasks/get", { id: task.id }, { key: stranger }),
      await rpc("tasks/cancel", { id: task.id }, { key: colleague })
    ])
    expect(reads).toEqual([])
    for (const answer of result) expect(answer.error?.code).toBe(-32001)
    // and the task is untouched
    expect((await rpc("tasks/get", { id: task.id })).result.status.state).toBe("completed")
  })

  it("an unknown task is -32001 as before: read from the read model, since no state of it is cached", async () => {
    const { result, reads } = await taskReadsDuring(() => rpc("tasks/get", { id: `a2a_${randomUUID().replaceAll("-", "")}` }))
    expect(result.error?.code).toBe(-32001)
    expect(reads).toHaveLength(1)
  })

  it("a read that must see a position past what the owner holds is not answered from memory", async () => {
    const task = await send("hello")
    const partition = partitionFor(keyOf(A2aTaskActor, task.id), node.config.partitions)
    // far past the log's end: the read model never gets there, so the read gives up after its bound
    const answer = await rpc("tasks/get", { id: task.id }, { headers: { "svc-position": `${partition}:999999999` } })
    expect(answer.result).toBeUndefined()
    expect(answer.error?.data).toMatchObject({ reason: "read_model_behind" })
  }, 20_000)
})
