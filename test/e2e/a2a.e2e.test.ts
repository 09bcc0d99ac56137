/**
 * A2A v0.3 interop with the official JavaScript client, `@a2a-js/sdk` (spec 2.7, 3.1, 4.3, 5 rule
 * 13, 6.2, 7.4): the client reads the public Agent Card, then speaks JSON-RPC to the card's `url`
 * with a workspace key as its Bearer credential. Turns run on the built-in offline model, so the
 * replies are known: `/memory`, `/long <n>`, `/slow <ms>`, `/ask Q | a | b`.
 */
import type { AgentCard, Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from "@a2a-js/sdk"
import { A2AClient, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, TaskNotFoundError } from "@a2a-js/sdk/client"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadConfig } from "../../src/platform/Config.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { addPerson, cliLogin } from "../support/people.ts"
import { otherWorkspaceWithKey } from "../support/places.ts"
import { sseEnvelopes } from "../support/sse.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { caughtUp } from "../support/projection.ts"

type StreamEvent = Message | Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent

let node: TestNode
/** The client of the bootstrap workspace's key. */
let client: A2AClient
/** A client of a key of another workspace of the same organization. */
let stranger: A2AClient
let strangerKey: string


/** A fetch that sends the key as `Authorization: Bearer <key>` (spec 5, rule 13). */
const fetchWithKey = (key: string): typeof fetch => (input, init) => {
  const headers = new Headers(init?.headers)
  headers.set("authorization", `Bearer ${key}`)
  return fetch(input, { ...init, headers })
}

const cardUrl = () => `${node.baseUrl}/.well-known/agent-card.json`

/** A second workspace of the bootstrap organization, and a workspace key of a member of it. */
const otherWorkspaceKey = async (): Promise<string> => {
  const slug = `other-${randomUUID().slice(0, 8)}`
  const workspace = { slug, workspaceId: `wsp_other_${randomUUID().slice(0, 8)}`, name: slug }
  const { key } = await otherWorkspaceWithKey(node, { workspace, person: "other-member", workspaceRole: "member", keyName: "a2a other workspace" })
  return key
}

beforeAll(async () => {
  // a chat rate limit no test here reaches
  node = await startTestNode({ assistant: { ...loadConfig({}).assistant, chatRateLimitPerMinute: 100_000 } })
  client = await A2AClient.fromCardUrl(cardUrl(), { fetchImpl: fetchWithKey(node.bootstrap.workspaceKey) })
  strangerKey = await otherWorkspaceKey()
  stranger = await A2AClient.fromCardUrl(cardUrl(), { fetchImpl: fetchWithKey(strangerKey) })
})
afterAll(async () => {
  await node?.stop()
})

// ---------------------------------------------------------------------------------------------
// helpers

const userMessage = (text: string, extra: Partial<Message> = {}): Message => ({
  kind: "message",
  role: "user",
  messageId: randomUUID(),
  parts: [{ kind: "text", text }],
  ...extra
})

const textOf = (message: { parts: ReadonlyArray<unknown> } | undefined) =>
  (message?.parts ?? []).map((part) => ((part as { kind: string }).kind === "text" ? (part as { text: string }).text : "")).join("")

/** The result of a JSON-RPC response the client returned, which must not be an error. */
const resultOf = <T>(response: { result?: unknown; error?: unknown }): T => {
  expect("error" in response ? response.error : undefined, JSON.stringify(response)).toBeUndefined()
  return response.result as T
}

/** The error of a JSON-RPC response the client returned, which must be one. */
const errorOf = (response: { result?: unknown; error?: unknown }) => {
  expect("error" in response, JSON.stringify(response)).toBe(true)
  return response.error as { code: number; message: string; data?: any }
}

const send = async (text: string, extra: Partial<Message> = {}, as: A2AClient = client): Promise<Task> => {
  const task = resultOf<Task>(await as.sendMessage({ message: userMessage(text, extra) }))
  expect(task.kind).toBe("task")
  return task
}

/** Reads a stream to its end; `onEvent` sees each event as it arrives (and may act on the task). */
const readStream = async (stream: AsyncGenerator<StreamEvent>, onEvent?: (event: StreamEvent, index: number) => Promise<void> | void) => {
  const events: Array<StreamEvent> = []
  for await (const event of stream) {
    events.push(event)
    await onEvent?.(event, events.length - 1)
  }
  return events
}

const getTask = async (id: string, historyLength?: number, as: A2AClient = client) =>
  as.getTask(historyLength === undefined ? { id } : { id, historyLength })

const TASK_ID = /^a2a_[0-9a-f]{32}$/
const CONTEXT_ID = /^ctx_[0-9a-f]{32}$/

// ---------------------------------------------------------------------------------------------

describe("the Agent Card", () => {
  it("the public card the client fetched has the v0.3 fields, names this node's endpoint, and offers the extended card", async () => {
    const card: AgentCard = await client.getAgentCard()
    for (const field of ["protocolVersion", "name", "description", "url", "version", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"]) {
      expect(card, field).toHaveProperty(field)
    }
    expect(card.protocolVersion).toBe("0.3.0")
    expect(card.url).toBe(`${node.baseUrl}/a2a`)
    expect(card.preferredTransport).toBe("JSONRPC")
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: false })
    // text, data parts (JSON) and files of the attachment types
    expect(card.defaultInputModes).toEqual(expect.arrayContaining(["text/plain", "application/json", "application/pdf", "image/png"]))
    expect(card.defaultOutputModes).toEqual(["text/plain"])
    expect(card.skills.length).toBeGreaterThan(0)
    for (const skill of card.skills) {
      expect(typeof skill.id).toBe("string")
      expect(typeof skill.name).toBe("string")
      expect(typeof skill.description).toBe("string")
      expect(Array.isArray(skill.tags)).toBe(true)
    }
    expect(card.securitySchemes).toEqual({ bearer: expect.objectContaining({ type: "http", scheme: "bearer" }) })
    expect(card.security).toEqual([{ bearer: [] }])
    expect(card.supportsAuthenticatedExtendedCard).toBe(true)
  })

  it("is public: served without a credential, as JSON", async () => {
    const response = await fetch(cardUrl())
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("application/json")
    expect(((await response.json()) as AgentCard).url).toBe(`${node.baseUrl}/a2a`)
  })

  it("the authenticated extended card (agent/getAuthenticatedExtendedCard) lists the workspace's skills", async () => {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: fetchWithKey(node.bootstrap.workspaceKey) })] })
    )
    const sdkClient = await factory.createFromUrl(node.baseUrl)
    // the newer client fetches the extended card itself, because the public card offers it
    const card = await sdkClient.getAgentCard()
    expect(card.protocolVersion).toBe("0.3.0")
    expect(card.url).toBe(`${node.baseUrl}/a2a`)
    expect(card.name).toBe(`${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug} assistant`)
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: false })
    const skills = new Map(card.skills.map((skill) => [skill.id, skill]))
    expect(skills.get("assistant")).toBeDefined()
    expect(skills.get("system__ping")).toMatchObject({ name: "system.ping", tags: ["reads"] })
    expect(skills.get("node__delete")?.tags).toEqual(["writes", "needs-approval"])
    // one skill per id
    expect(skills.size).toBe(card.skills.length)

    // the same through the older client's generic call
    const raw = resultOf<AgentCard>(await client.callExtensionMethod("agent/getAuthenticatedExtendedCard", undefined))
    expect(raw.skills.map((skill) => skill.id)).toEqual(card.skills.map((skill) => skill.id))

    // without a key there is no extended card: the endpoint answers 401
    const anonymous = await A2AClient.fromCardUrl(cardUrl())
    await expect(anonymous.callExtensionMethod("agent/getAuthenticatedExtendedCard", undefined)).rejects.toThrow(/401/)
  })
})

describe("message/send", () => {
  it("runs the task to completion: the reply is the artifact `response`, the history is [user, agent]", async () => {
    const sent = userMessage("hello agent")
    const task = resultOf<Task>(await client.sendMessage({ message: sent }))
    expect(task).toMatchObject({ kind: "task", id: expect.stringMatching(TASK_ID), contextId: expect.stringMatching(CONTEXT_ID) })
    expect(task.status.state).toBe("completed")
    expect(Number.isNaN(Date.parse(task.status.timestamp!))).toBe(false)
    expect(textOf(task.status.message)).toBe("You said: hello agent")
    expect(task.artifacts).toHaveLength(1)
    expect(task.artifacts![0]).toMatchObject({ artifactId: expect.any(String), name: "response" })
    expect(textOf(task.artifacts![0])).toBe("You said: hello agent")
    expect(task.history!.map((m) => m.role)).toEqual(["user", "agent"])
    expect(task.history![0]).toEqual({ kind: "message", role: "user", parts: [{ kind: "text", text: "hello agent" }], messageId: sent.messageId, taskId: task.id, contextId: task.contextId })
    expect(task.history![1]).toMatchObject({ kind: "message", role: "agent", taskId: task.id, contextId: task.contextId })
    expect(textOf(task.history![1])).toBe("You said: hello agent")
  })

  it("a second message with the returned contextId continues the conversation", async () => {
    const first = await send("remember the word teal")
    const second = await send("/memory", { contextId: first.contextId })
    expect(second.contextId).toBe(first.contextId)
    expect(second.id).not.toBe(first.id)
    expect(second.status.state).toBe("completed")
    expect(textOf(second.artifacts![0])).toBe("I see 2 earlier messages. Summary: none.")
    // a new task without a contextId starts afresh
    const fresh = await send("/memory")
    expect(fresh.contextId).not.toBe(first.contextId)
    expect(textOf(fresh.artifacts![0])).toBe("I see 0 earlier messages. Summary: none.")
  })
})

describe("message/stream", () => {
  it("streams the Task as submitted, working, the reply in artifact chunks, then completed with final true, and ends", async () => {
    const events = await readStream(client.sendMessageStream({ message: userMessage("/long 10") }))
    const [first, second] = events
    expect(first).toMatchObject({ kind: "task", id: expect.stringMatching(TASK_ID), contextId: expect.stringMatching(CONTEXT_ID), status: { state: "submitted" } })
    const task = first as Task
    expect(task.history).toHaveLength(1)
    expect(second).toMatchObject({ kind: "status-update", taskId: task.id, contextId: task.contextId, status: { state: "working" }, final: false })
    const chunks = events.filter((e): e is TaskArtifactUpdateEvent => e.kind === "artifact-update")
    expect(chunks.length).toBeGreaterThan(1)
    expect(chunks[0].append).toBe(false)
    for (const chunk of chunks.slice(1)) expect(chunk.append).toBe(true)
    expect(chunks.map((c) => c.lastChunk)).toEqual([...chunks.slice(1).map(() => false), true])
    for (const chunk of chunks) expect(chunk).toMatchObject({ taskId: task.id, contextId: task.contextId, artifact: { artifactId: chunks[0].artifact.artifactId, name: "response" } })
    const last = events.at(-1) as TaskStatusUpdateEvent
    expect(last).toMatchObject({ kind: "status-update", taskId: task.id, status: { state: "completed" }, final: true })
    // only the last event is final, and the order is Task, working, chunks, completed
    expect(events.filter((e) => e.kind === "status-update" && e.final)).toHaveLength(1)
    expect(events.map((e) => e.kind)).toEqual(["task", "status-update", ...chunks.map(() => "artifact-update"), "status-update"])

    const reply = chunks.map((c) => textOf(c.artifact)).join("")
    expect(reply.split(" ")).toHaveLength(10)
    expect(textOf(last.status.message)).toBe(reply)
    const stored = resultOf<Task>(await getTask(task.id))
    expect(stored.status.state).toBe("completed")
    expect(textOf(stored.artifacts![0])).toBe(reply)
    expect(stored.artifacts![0].artifactId).toBe(chunks[0].artifact.artifactId)
  })
})

describe("tasks/get", () => {
  it("returns the task; historyLength keeps the last N messages (0: none, absent: all)", async () => {
    const task = await send("count my words")
    const all = resultOf<Task>(await getTask(task.id))
    expect(all).toMatchObject({ kind: "task", id: task.id, contextId: task.contextId, status: { state: "completed" } })
    expect(all.history!.map((m) => m.role)).toEqual(["user", "agent"])
    expect(all.artifacts).toEqual(task.artifacts)
    const none = resultOf<Task>(await getTask(task.id, 0))
    expect(none.history).toEqual([])
    expect(none.artifacts).toEqual(task.artifacts)
    const one = resultOf<Task>(await getTask(task.id, 1))
    expect(one.history).toEqual([all.history![1]])
    expect(resultOf<Task>(await getTask(task.id, 10)).history).toEqual(all.history)
  })

  it("an unknown or malformed id is -32001", async () => {
    for (const id of [`a2a_${"0".repeat(32)}`, "not-a-task"]) {
      const error = errorOf(await getTask(id))
      expect(error.code).toBe(-32001)
    }
  })
})

describe("tasks/cancel and tasks/resubscribe", () => {
  it("cancels a running task: the Task is canceled, its stream ends, a second cancel is -32002", async () => {
    let taskId = ""
    let canceled: Task | undefined
    const started = Date.now()
    const events = await readStream(client.sendMessageStream({ message: userMessage("/slow 200\n/long 100") }), async (event) => {
      if (event.kind === "task") taskId = event.id
      if (event.kind === "artifact-update" && canceled === undefined) {
        canceled = resultOf<Task>(await client.cancelTask({ id: taskId }))
      }
    })
    // 100 words at 3 a chunk, 200 ms apart, take about 7 s: the stream ended well before
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(canceled).toMatchObject({ kind: "task", id: taskId, status: { state: "canceled" } })
    const chunks = events.filter((e) => e.kind === "artifact-update")
    expect(chunks.length).toBeGreaterThan(0)
    expect(chunks.length).toBeLessThan(34)
    expect(events.some((e) => e.kind === "status-update" && e.status.state === "completed")).toBe(false)
    // the stream ends with the final canceled status-update, nothing after it
    expect(events.at(-1)).toMatchObject({ kind: "status-update", taskId, status: { state: "canceled" }, final: true })
    expect(events.filter((e) => e.kind === "status-update" && e.final)).toHaveLength(1)

    const again = errorOf(await client.cancelTask({ id: taskId }))
    expect(again.code).toBe(-32002)
    const stored = resultOf<Task>(await getTask(taskId))
    expect(stored.status.state).toBe("canceled")
    expect(stored.artifacts).toEqual([])

    // the turn stopped: its run ends stopped
    const [row] = await node.db.sql`select r.status from ${node.db.table("runs")} r join ${node.db.table("a2a_tasks")} t on t.run_id = r.run_id where t.task_id = ${taskId}`
    expect(row?.status).toBe("stopped")
  })

  it("cancel or get of an unknown task is -32001, as the SDK's TaskNotFoundError", async () => {
    const unknown = `a2a_${randomUUID().replaceAll("-", "")}`
    expect(errorOf(await client.cancelTask({ id: unknown })).code).toBe(-32001)
    expect(errorOf(await client.getTask({ id: unknown })).code).toBe(-32001)
    // the newer client throws the typed error
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: fetchWithKey(node.bootstrap.workspaceKey) })] })
    )
    const sdkClient = await factory.createFromUrl(node.baseUrl)
    await expect(sdkClient.getTask({ id: unknown })).rejects.toBeInstanceOf(TaskNotFoundError)
  })

  it("resubscribing to a running task streams its status updates and the whole response from its start, until the final status", async () => {
    let taskId = ""
    let resubscribed: Promise<Array<StreamEvent>> | undefined
    let chunksSeen = 0
    const events = await readStream(client.sendMessageStream({ message: userMessage("/slow 100\n/long 24") }), (event) => {
      if (event.kind === "task") taskId = event.id
      // joined mid-answer: a few chunks have gone by on the first stream
      if (event.kind === "artifact-update" && ++chunksSeen === 3) resubscribed = readStream(client.resubscribeTask({ id: taskId }))
    })
    expect(events.at(-1)).toMatchObject({ kind: "status-update", status: { state: "completed" }, final: true })
    const updates = await resubscribed!
    for (const update of updates) expect(update).toMatchObject({ taskId, contextId: (events[0] as Task).contextId })
    const statuses = updates.filter((u): u is TaskStatusUpdateEvent => u.kind === "status-update")
    expect(statuses[0].status.state).toBe("working")
    expect(statuses[0].final).toBe(false)
    expect(statuses.filter((u) => u.final)).toHaveLength(1)
    expect(updates.at(-1)).toMatchObject({ kind: "status-update", status: { state: "completed" }, final: true })

    // the response: the first chunk replaces what the client held, the last says so, and together
    // they are the task's artifact, as the first stream gave it
    const chunks = updates.filter((u): u is TaskArtifactUpdateEvent => u.kind === "artifact-update")
    expect(chunks.length).toBeGreaterThan(1)
    expect(chunks.map((c) => c.append)).toEqual([false, ...chunks.slice(1).map(() => true)])
    expect(chunks.map((c) => c.lastChunk)).toEqual([...chunks.slice(1).map(() => false), true])
    const textOf = (updates: ReadonlyArray<StreamEvent>) =>
      updates.flatMap((u) => (u.kind === "artifact-update" ? u.artifact.parts.map((p) => (p.kind === "text" ? p.text : "")) : [])).join("")
    const stored = resultOf<Task>(await getTask(taskId))
    const artifact = stored.artifacts![0]!.parts.map((p) => (p.kind === "text" ? p.text : "")).join("")
    expect(textOf(updates)).toBe(artifact)
    expect(textOf(events)).toBe(artifact)
    expect(new Set(chunks.map((c) => c.artifact.artifactId))).toEqual(new Set([stored.artifacts![0]!.artifactId]))
  })

  it("resubscribing to a task that ended streams its final state at once", async () => {
    const task = await send("already done")
    const updates = (await readStream(client.resubscribeTask({ id: task.id }))) as Array<TaskStatusUpdateEvent>
    expect(updates).toEqual([{ kind: "status-update", taskId: task.id, contextId: task.contextId, status: { state: "completed", timestamp: expect.any(String) }, final: true }])
  })
})

describe("push notifications", () => {
  it("are not supported: the client refuses from the card, and every pushNotificationConfig method is -32003", async () => {
    const task = await send("push me")
    await expect(
      client.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: { url: "https://example.test/hook" } })
    ).rejects.toThrow(/push notifications/i)
    expect(errorOf(await client.getTaskPushNotificationConfig({ id: task.id })).code).toBe(-32003)
    expect(errorOf(await client.listTaskPushNotificationConfig({ id: task.id })).code).toBe(-32003)
    expect(errorOf(await client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: "cfg" })).code).toBe(-32003)
    // the set method itself, past the client's own check
    const set = errorOf(await client.callExtensionMethod("tasks/pushNotificationConfig/set", { taskId: task.id, pushNotificationConfig: { url: "https://example.test/hook" } }))
    expect(set.code).toBe(-32003)
  })
})

describe("input-required", () => {
  it("a question makes the task input-required; the next message with its taskId answers it and the task completes", async () => {
    const asked = await send("/ask Pick one | red | blue")
    expect(asked.status.state).toBe("input-required")
    expect(asked.status.message).toMatchObject({ kind: "message", role: "agent", taskId: asked.id, contextId: asked.contextId })
    expect(textOf(asked.status.message)).toBe("Pick one (red / blue)")
    expect(asked.history!.map((m) => m.role)).toEqual(["user", "agent"])
    expect(resultOf<Task>(await getTask(asked.id)).status.state).toBe("input-required")

    const answered = await send("red", { taskId: asked.id, contextId: asked.contextId })
    expect(answered.id).toBe(asked.id)
    expect(answered.status.state).toBe("completed")
    expect(textOf(answered.artifacts![0])).toContain('{"answer":"red"}')
    expect(answered.history!.map((m) => m.role)).toEqual(["user", "agent", "user", "agent"])
    expect(textOf(answered.history![2])).toBe("red")

    // a completed task takes no more messages
    const late = errorOf(await client.sendMessage({ message: userMessage("blue", { taskId: asked.id }) }))
    expect(late.code).toBe(-32602)
    expect(late.data).toMatchObject({ reason: "task_terminal" })
  })

  it("a task waiting for input can be canceled: its turn, waiting on the question, stops", async () => {
    const asked = await send("/ask Deploy now | yes | no")
    expect(asked.status.state).toBe("input-required")
    const canceled = resultOf<Task>(await client.cancelTask({ id: asked.id }))
    expect(canceled.status.state).toBe("canceled")
    const until = Date.now() + 5_000
    let run: { status: string } | undefined
    for (;;) {
      ;[run] = (await node.db.sql`select r.status from ${node.db.table("runs")} r join ${node.db.table("a2a_tasks")} t on t.run_id = r.run_id where t.task_id = ${asked.id}`) as unknown as Array<{ status: string }>
      if (run?.status !== "running" || Date.now() > until) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(run?.status).toBe("stopped")
    // an answer after the cancel is refused; the task stays canceled
    expect(errorOf(await client.sendMessage({ message: userMessage("yes", { taskId: asked.id }) })).code).toBe(-32602)
    expect(resultOf<Task>(await getTask(asked.id)).status.state).toBe("canceled")
  })

  it("a message for a task that is not waiting for input is -32602, for an unknown task -32001", async () => {
    const done = await send("nothing to ask")
    const unknown = errorOf(await client.sendMessage({ message: userMessage("red", { taskId: `a2a_${"f".repeat(32)}` }) }))
    expect(unknown.code).toBe(-32001)
    expect(errorOf(await client.sendMessage({ message: userMessage("red", { taskId: done.id }) })).code).toBe(-32602)
  })
})

describe("workspaces", () => {
  it("another workspace's key can neither read, cancel, answer nor resubscribe to the task: -32001", async () => {
    let taskId = ""
    let checked = false
    await readStream(client.sendMessageStream({ message: userMessage("/slow 100\n/long 30") }), async (event) => {
      if (event.kind === "task") taskId = event.id
      if (event.kind === "artifact-update" && !checked) {
        checked = true
        expect(errorOf(await stranger.getTask({ id: taskId })).code).toBe(-32001)
        expect(errorOf(await stranger.cancelTask({ id: taskId })).code).toBe(-32001)
        expect(errorOf(await stranger.sendMessage({ message: userMessage("red", { taskId }) })).code).toBe(-32001)
        // a stream refused before it opens is a stream of that one error, which the SDK reports with its message
        await expect(readStream(stranger.resubscribeTask({ id: taskId }))).rejects.toThrow(/Task not found/)
        const raw = await fetchWithKey(strangerKey)(`${node.baseUrl}/a2a`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tasks/resubscribe", params: { id: taskId } })
        })
        expect(raw.headers.get("content-type")).toBe("text/event-stream")
        expect(sseEnvelopes(await raw.text())).toEqual([{ jsonrpc: "2.0", id: 7, error: { code: -32001, message: "Task not found" } }])
      }
    })
    expect(checked).toBe(true)
    // the stranger's cancel did nothing
    expect(resultOf<Task>(await getTask(taskId)).status.state).toBe("completed")
  })

  it("another workspace's key runs tasks of its own, which the first workspace cannot see", async () => {
    const own = await send("mine", {}, stranger)
    expect(own.status.state).toBe("completed")
    expect(errorOf(await getTask(own.id)).code).toBe(-32001)
    expect(resultOf<Task>(await getTask(own.id, undefined, stranger)).id).toBe(own.id)
  })
})

describe("people of one workspace", () => {
  it("a colleague's CLI login can neither read, cancel, answer nor resubscribe to another person's task: -32001, and the task goes on", async () => {
    // the bootstrap key's task is its creator's, the Owner's; the colleague is a Member of the same workspace
    const colleague = await A2AClient.fromCardUrl(cardUrl(), { fetchImpl: fetchWithKey(await cliLogin(node, await addPerson(node, "a2a-colleague", { org: "member", workspace: "member" }))) })
    const asked = await send("/ask Ship it | yes | no")
    expect(asked.status.state).toBe("input-required")
    expect(errorOf(await colleague.getTask({ id: asked.id })).code).toBe(-32001)
    expect(errorOf(await colleague.cancelTask({ id: asked.id })).code).toBe(-32001)
    expect(errorOf(await colleague.sendMessage({ message: userMessage("yes", { taskId: asked.id }) })).code).toBe(-32001)
    await expect(readStream(colleague.resubscribeTask({ id: asked.id }))).rejects.toThrow(/Task not found/)
    // the task is untouched: still waiting on its person, who cancels it
    expect(resultOf<Task>(await getTask(asked.id)).status.state).toBe("input-required")
    expect(resultOf<Task>(await client.cancelTask({ id: asked.id })).status.state).toBe("canceled")

    // and the other way round: the colleague's own task is not the Owner's key's to read or cancel
    const theirs = await send("/ask Mine | yes | no", {}, colleague)
    expect(errorOf(await getTask(theirs.id)).code).toBe(-32001)
    expect(errorOf(await client.cancelTask({ id: theirs.id })).code).toBe(-32001)
    expect(resultOf<Task>(await getTask(theirs.id, undefined, colleague)).status.state).toBe("input-required")
    expect(resultOf<Task>(await colleague.cancelTask({ id: theirs.id })).status.state).toBe("canceled")
  })
})

describe("audit", () => {
  it("every method leaves audit rows on the surface a2a", async () => {
    const task = await send("audit me")
    await getTask(task.id)
    await client.cancelTask({ id: task.id })
    await client.callExtensionMethod("agent/getAuthenticatedExtendedCard", undefined)
    await Effect.runPromise(caughtUp(node.db).pipe(Effect.provideService(EventLog, node.log)))
    const rows = await node.db.sql`
      select capability, outcome, error_tag, principal_kind, api_key_id from ${node.db.table("audit_log")}
      where surface = 'a2a' order by at`
    const capabilities = new Set(rows.map((r) => r.capability))
    for (const capability of ["a2a.message.send", "a2a.tasks.get", "a2a.tasks.cancel", "a2a.card.extended"]) expect(capabilities).toContain(capability)
    // the cancel of a completed task is recorded as refused
    expect(rows.some((r) => r.capability === "a2a.tasks.cancel" && r.outcome !== "succeeded" && r.error_tag === "TaskNotCancelable")).toBe(true)
    expect(rows.some((r) => r.capability === "a2a.message.send" && r.outcome === "succeeded" && r.principal_kind === "api_key" && r.api_key_id !== null)).toBe(true)
  })
})
