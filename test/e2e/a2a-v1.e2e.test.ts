/**
 * A2A 1.0 beside 0.3 on `/a2a` (docs/a2a.md, "Versions"), with the official 1.x client,
 * `@a2a-js/sdk` 1.3 (installed as `@a2a-js/sdk-v1`), without its 0.3 compatibility option: it reads
 * the card, picks the 1.0 interface and sends `A2A-Version: 1.0` with every call. The 0.3 client
 * reads what the 1.0 one wrote and the reverse: one task, two wires. Turns run on the built-in
 * offline model: `/slow <ms>`, `/long <n>`, `/ask Q | a | b`.
 */
import { A2AClient } from "@a2a-js/sdk/client"
import type { Task as V03Task } from "@a2a-js/sdk"
import { type AgentCard, CancelTaskRequest, GetTaskRequest, ListTasksRequest, Role, SendMessageRequest, type StreamResponse, SubscribeToTaskRequest, type Task, TaskState, verifyAgentCardSignature } from "@a2a-js/sdk-v1"
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from "@a2a-js/sdk-v1/client"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadConfig } from "../../src/platform/Config.ts"
import { addPerson, cliLogin } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { sseEnvelopes } from "../support/sse.ts"

let node: TestNode

const fetchWithKey = (key: string): typeof fetch => (input, init) => {
  const headers = new Headers(init?.headers)
  headers.set("authorization", `Bearer ${key}`)
  return fetch(input, { ...init, headers })
}

/** A 1.x client of a credential over JSON-RPC, made from the public card as the SDK makes one. */
const jsonRpcClient = (key: string): Promise<Client> =>
  new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: fetchWithKey(key) })] })).createFromUrl(node.baseUrl)

/** The same over HTTP+JSON, the card's REST interface. */
const restClient = (key: string): Promise<Client> =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new RestTransportFactory({ fetchImpl: fetchWithKey(key) })], preferredTransports: ["HTTP+JSON"] })
  ).createFromUrl(node.baseUrl)

let v1: Client
let v03: A2AClient

beforeAll(async () => {
  node = await startTestNode({ assistant: { ...loadConfig({}).assistant, chatRateLimitPerMinute: 100_000 } })
  v1 = await jsonRpcClient(node.bootstrap.workspaceKey)
  v03 = await A2AClient.fromCardUrl(`${node.baseUrl}/.well-known/agent-card.json`, { fetchImpl: fetchWithKey(node.bootstrap.workspaceKey) })
})
afterAll(async () => {
  await node?.stop()
})

/** A request as the client's typed API takes it, made from its JSON (the SDK fills in every default). */
const textMessage = (text: string, extra: { contextId?: string; taskId?: string } = {}) =>
  SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra } })
const getRequest = (id: string, historyLength?: number) => GetTaskRequest.fromJSON({ id, historyLength })
const cancel = (id: string) => CancelTaskRequest.fromJSON({ id })
const subscribe = (id: string) => SubscribeToTaskRequest.fromJSON({ id })
const list = (params: Record<string, unknown>) => ListTasksRequest.fromJSON(params)

const textOf = (parts: ReadonlyArray<{ content?: { $case: string; value: unknown } }> | undefined) =>
  (parts ?? []).map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("")

const send = async (text: string, client: Client = v1): Promise<Task> => {
  const result = await client.sendMessage(textMessage(text))
  expect("status" in result, JSON.stringify(result)).toBe(true)
  return result as Task
}

const readStream = async (stream: AsyncGenerator<StreamResponse>, onEvent?: (event: StreamResponse) => Promise<void> | void) => {
  const events: Array<StreamResponse> = []
  for await (const event of stream) {
    events.push(event)
    await onEvent?.(event)
  }
  return events
}

const rpc = async (method: string, params: unknown, headers: Record<string, string> = {}): Promise<any> => {
  const response = await fetch(`${node.baseUrl}/a2a`, {
    method: "POST",
    headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
  })
  return response.headers.get("content-type")?.startsWith("text/event-stream") ? sseEnvelopes(await response.text()) : await response.json()
}

describe("the Agent Card", () => {
  it("a 1.0 client gets the 1.0 card: both versions' interfaces, 1.0's security shape, the extended card offered", async () => {
    const response = await fetch(`${node.baseUrl}/.well-known/agent-card.json`, { headers: { "a2a-version": "1.0" } })
    const card: any = await response.json()
    expect(response.headers.get("vary")).toContain("A2A-Version")
    expect(card.supportedInterfaces).toEqual([
      { url: `${node.baseUrl}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${node.baseUrl}/a2a/v1`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      { url: `${node.baseUrl}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "0.3" }
    ])
    expect(card).not.toHaveProperty("protocolVersion")
    expect(card).not.toHaveProperty("url")
    expect(card.capabilities).toEqual({ streaming: true, pushNotifications: false, extendedAgentCard: true })
    expect(card.securitySchemes).toEqual({ bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: "bearer" }) } })
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }])
  })

  it("a client without the header gets the 0.3 card, which lists the 1.0 interface too", async () => {
    const card: any = await (await fetch(`${node.baseUrl}/.well-known/agent-card.json`)).json()
    expect(card).toMatchObject({ protocolVersion: "0.3.0", url: `${node.baseUrl}/a2a`, preferredTransport: "JSONRPC" })
    expect(card.supportedInterfaces).toContainEqual({ url: `${node.baseUrl}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" })
  })

  it("is cacheable: Cache-Control with max-age, an ETag per version and Last-Modified; a conditional request for the same card is 304", async () => {
    const cardUrl = `${node.baseUrl}/.well-known/agent-card.json`
    const v1Card = await fetch(cardUrl, { headers: { "a2a-version": "1.0" } })
    expect(v1Card.headers.get("cache-control")).toMatch(/max-age=\d+/)
    const etag = v1Card.headers.get("etag")!
    const lastModified = v1Card.headers.get("last-modified")!
    expect(etag).toMatch(/^W\/".+"$/)
    expect(Date.parse(lastModified)).toBeLessThanOrEqual(Date.now())
    const again = await fetch(cardUrl, { headers: { "a2a-version": "1.0", "if-none-match": etag } })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe("")
    expect(again.headers.get("etag")).toBe(etag)
    expect((await fetch(cardUrl, { headers: { "a2a-version": "1.0", "if-modified-since": lastModified } })).status).toBe(304)
    // the 0.3 card is another representation: the 1.0 card's tag does not match it
    const v03Card = await fetch(cardUrl, { headers: { "if-none-match": etag } })
    expect(v03Card.status).toBe(200)
    expect(v03Card.headers.get("etag")).not.toBe(etag)
    // which declares the extended card in 1.0's terms too, for a 1.0 client that reads it
    expect(((await v03Card.json()) as any).capabilities).toMatchObject({ extendedAgentCard: true })
  })

  it("GetExtendedAgentCard: the client fetches the workspace's card, in 1.0's shape", async () => {
    const card = await v1.getAgentCard()
    expect(card.name).toBe(`${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug} assistant`)
    expect(card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`)).toContain(`JSONRPC 1.0 ${node.baseUrl}/a2a`)
    expect(card.skills.map((skill) => skill.id)).toEqual(expect.arrayContaining(["assistant", "system__ping"]))
    expect(card.capabilities?.extensions?.map((e) => e.uri)).toEqual(["urn:svc:a2a:ext:agent-slug:v1"])
  })
})

/**
 * The SDK's card-signature check, its key fetched as a client would: the JWK Set `jku` names, the key
 * `kid` names. It is given the card as served (JSON): the SDK's parsed card loses its
 * securitySchemes when the check re-reads it, so no signature over the served card holds on that.
 */
const fetchedKeys: Array<string> = []
const verifySignature = verifyAgentCardSignature(async (kid, jku) => {
  fetchedKeys.push(`${jku} ${kid}`)
  const { keys } = (await (await fetch(jku!)).json()) as { keys: Array<{ kid: string }> }
  const key = keys.find((candidate) => candidate.kid === kid)
  if (key === undefined) throw new Error(`no key ${kid} at ${jku}`)
  return key
})

const publicCard = async () => (await (await fetch(`${node.baseUrl}/.well-known/agent-card.json`, { headers: { "a2a-version": "1.0" } })).json()) as AgentCard

describe("the signed Agent Card", () => {
  it("the public 1.0 card carries an ES256 JWS the SDK's check accepts, with the key from /.well-known/jwks.json", async () => {
    const card = await publicCard()
    expect(card.signatures).toHaveLength(1)
    const header = JSON.parse(Buffer.from(card.signatures[0]!.protected, "base64url").toString())
    expect(header).toMatchObject({ alg: "ES256", typ: "JOSE", jku: `${node.baseUrl}/.well-known/jwks.json` })
    fetchedKeys.length = 0
    await verifySignature(card)
    expect(fetchedKeys).toEqual([`${node.baseUrl}/.well-known/jwks.json ${header.kid}`])
  })

  it("the extended card is signed too, over JSON-RPC and HTTP+JSON; the 0.3 card is not", async () => {
    const rpc = await fetch(`${node.baseUrl}/a2a`, {
      method: "POST",
      headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}`, "a2a-version": "1.0", "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard", params: {} })
    })
    const { result } = (await rpc.json()) as { result: AgentCard }
    expect(result.name).toBe(`${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug} assistant`)
    await verifySignature(result)
    const rest = await fetch(`${node.baseUrl}/a2a/v1/extendedAgentCard`, { headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}`, "a2a-version": "1.0" } })
    await verifySignature((await rest.json()) as AgentCard)
    expect(await (await fetch(`${node.baseUrl}/.well-known/agent-card.json`)).json()).not.toHaveProperty("signatures")
  })

  it("a card altered after signing fails the check: a renamed agent, an added skill, an interface moved elsewhere", async () => {
    const card = await publicCard()
    await expect(verifySignature({ ...card, name: "someone else" })).rejects.toThrow("No valid signatures")
    await expect(verifySignature({ ...card, skills: [...card.skills, { ...card.skills[0]!, id: "extra" }] })).rejects.toThrow("No valid signatures")
    const moved = card.supportedInterfaces.map((i) => ({ ...i, url: "https://attacker.example/a2a" }))
    await expect(verifySignature({ ...card, supportedInterfaces: moved })).rejects.toThrow("No valid signatures")
    await expect(verifySignature({ ...card, signatures: [] })).rejects.toThrow("No signatures")
  })
})

describe("SendMessage, GetTask, CancelTask", () => {
  it("sends a message: the Task completes, its reply in the response artifact and the history, states and roles as 1.0 names them", async () => {
    const task = await send("hello agent")
    expect(task.id).toMatch(/^a2a_[0-9a-f]{32}$/)
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(textOf(task.artifacts[0]?.parts)).toBe("You said: hello agent")
    expect(task.history.map((m) => m.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT])
    const read = await v1.getTask(getRequest(task.id, 1))
    expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(read.history).toHaveLength(1)
    expect(textOf(read.history[0].parts)).toBe("You said: hello agent")
  })

  it("on the wire: no kind, a part is {text}, a state is TASK_STATE_*, SendMessage answers {task}", async () => {
    const answer = await rpc("SendMessage", { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "wire" }, { data: { n: 1 } }] } }, { "a2a-version": "1.0" })
    const task = answer.result.task
    expect(task).not.toHaveProperty("kind")
    expect(task.status.state).toBe("TASK_STATE_COMPLETED")
    expect(task.history[0]).toMatchObject({ role: "ROLE_USER", parts: [{ text: "wire" }, { data: { n: 1 } }] })
    expect(task.history[0]).not.toHaveProperty("kind")
  })

  it("a 0.3 method under A2A-Version 1.0, and a 1.0 method without the header (0.3), are not found: -32601", async () => {
    expect((await rpc("message/send", { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "x" }] } }, { "a2a-version": "1.0" })).error.code).toBe(-32601)
    expect((await rpc("SendMessage", { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "x" }] } })).error.code).toBe(-32601)
  })

  it("an unknown task is TaskNotFoundError; a second cancel is TaskNotCancelableError; push configs are refused with -32003", async () => {
    const unknown = `a2a_${randomUUID().replaceAll("-", "")}`
    await expect(v1.getTask(getRequest(unknown))).rejects.toMatchObject({ name: "TaskNotFoundError" })
    const asked = await send("/ask Ship it | yes | no")
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    expect((await v1.cancelTask(cancel(asked.id))).status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    await expect(v1.cancelTask(cancel(asked.id))).rejects.toMatchObject({ name: "TaskNotCancelableError" })
    for (const method of ["CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig"]) {
      expect((await rpc(method, { taskId: asked.id }, { "a2a-version": "1.0" })).error.code).toBe(-32003)
    }
  })

  it("an unserved version is VersionNotSupportedError (-32009), naming both served versions", async () => {
    const answer = await rpc("SendMessage", {}, { "a2a-version": "2.0" })
    expect(answer.error).toMatchObject({ code: -32009, data: { supportedVersions: ["0.3", "1.0"] } })
  })
})

describe("1.0's JSON-RPC errors", () => {
  it("carry data as a list holding a google.rpc.ErrorInfo (reason, domain, facts as string metadata); 0.3's are unchanged", async () => {
    const unknownId = `a2a_${randomUUID().replaceAll("-", "")}`
    const notFound = await rpc("GetTask", { id: unknownId }, { "a2a-version": "1.0" })
    expect(notFound.error).toEqual({ code: -32001, message: "Task not found", data: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" }] })
    const badParams = await rpc("ListTasks", { pageSize: 101 }, { "a2a-version": "1.0" })
    expect(badParams.error.data).toEqual([{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "INVALID_PARAMS", domain: "a2a-protocol.org", metadata: { reason: "invalid_input" } }])
    // the official client still tells the error by its code
    await expect(v1.getTask(getRequest(unknownId))).rejects.toMatchObject({ name: "TaskNotFoundError" })
    // 0.3: no data on a not-found, the platform's object on bad params
    expect((await rpc("tasks/get", { id: unknownId })).error).toEqual({ code: -32001, message: "Task not found" })
    expect((await rpc("tasks/get", { id: unknownId, historyLength: -1 })).error.data).toEqual({ reason: "invalid_input" })
  })
})

describe("a request body that is not declared JSON", () => {
  it("is ContentTypeNotSupportedError (-32005) in 1.0, unread; JSON with parameters is read; 0.3 reads the body as before", async () => {
    const post = (contentType: string, body: string, version?: string) =>
      fetch(`${node.baseUrl}/a2a`, {
        method: "POST",
        headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}`, "content-type": contentType, ...(version === undefined ? {} : { "a2a-version": version }) },
        body
      }).then(async (response) => ({ status: response.status, answer: (await response.json()) as any }))
    const unknownTask = (method: string) => JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { id: `a2a_${"0".repeat(32)}` } })
    const refused = await post("text/plain", "{'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage'}", "1.0")
    expect(refused.status).toBe(200)
    expect(refused.answer.error).toMatchObject({ code: -32005, data: [expect.objectContaining({ reason: "CONTENT_TYPE_NOT_SUPPORTED" })] })
    expect((await post("text/plain", unknownTask("GetTask"), "1.0")).answer.error.code).toBe(-32005)
    expect((await post("application/json; charset=utf-8", unknownTask("GetTask"), "1.0")).answer.error.code).toBe(-32001)
    expect((await post("application/a2a+json", unknownTask("GetTask"), "1.0")).answer.error.code).toBe(-32001)
    expect((await post("text/plain", unknownTask("tasks/get"))).answer.error.code).toBe(-32001)
  })
})

describe("SendStreamingMessage and SubscribeToTask", () => {
  it("streams the Task, working, the reply in artifact chunks, then completed; the stream's close ends it (no final flag)", async () => {
    const events = await readStream(v1.sendMessageStream(textMessage("/long 12")))
    expect(events[0].payload?.$case).toBe("task")
    const cases = events.map((event) => event.payload?.$case)
    expect(cases).toContain("artifactUpdate")
    const last = events.at(-1)!.payload!
    expect(last.$case).toBe("statusUpdate")
    expect(last.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const text = events.flatMap((event) => (event.payload?.$case === "artifactUpdate" ? [textOf(event.payload.value.artifact?.parts)] : [])).join("")
    expect(text.split(/\s+/).filter(Boolean)).toHaveLength(12)

    // on the wire: statusUpdate without final, artifactUpdate with its flags
    const raw = await rpc("SendStreamingMessage", { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "raw" }] } }, { "a2a-version": "1.0", accept: "text/event-stream" })
    expect(Object.keys(raw[0].result)).toEqual(["task"])
    const statuses = raw.filter((envelope: any) => "statusUpdate" in envelope.result).map((envelope: any) => envelope.result.statusUpdate)
    expect(statuses.at(-1).status.state).toBe("TASK_STATE_COMPLETED")
    for (const status of statuses) expect(status).not.toHaveProperty("final")
  })

  it("cancels a running task from its stream; SubscribeToTask follows another task to its end", async () => {
    let taskId = ""
    let canceled: Task | undefined
    const events = await readStream(v1.sendMessageStream(textMessage("/slow 200\n/long 100")), async (event) => {
      if (event.payload?.$case === "task") taskId = event.payload.value.id
      if (event.payload?.$case === "artifactUpdate" && canceled === undefined) canceled = await v1.cancelTask(cancel(taskId))
    })
    expect(canceled?.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    const last = events.at(-1)!.payload!
    expect(last.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_CANCELED)

    let followed: Promise<Array<StreamResponse>> | undefined
    let followedId = ""
    await readStream(v1.sendMessageStream(textMessage("/slow 100\n/long 24")), (event) => {
      if (event.payload?.$case === "task") followedId = event.payload.value.id
      if (event.payload?.$case === "artifactUpdate" && followed === undefined) followed = readStream(v1.resubscribeTask(subscribe(followedId)))
    })
    const updates = await followed!
    expect(updates.length).toBeGreaterThan(0)
    const end = updates.at(-1)!.payload!
    expect(end.$case === "statusUpdate" && end.value.taskId === followedId && end.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    // the subscriber gets the response too, from its start: the task's artifact, whole
    const followedText = updates.flatMap((event) => (event.payload?.$case === "artifactUpdate" ? [textOf(event.payload.value.artifact?.parts)] : [])).join("")
    const done = await v1.getTask(getRequest(followedId))
    expect(followedText).toBe(textOf(done.artifacts[0]?.parts))
    expect(followedText.length).toBeGreaterThan(0)
  })
})

describe("SubscribeToTask of an ended task", () => {
  it("is UnsupportedOperationError on JSON-RPC (-32004) and HTTP+JSON (400, UNSUPPORTED_OPERATION); 0.3's tasks/resubscribe still answers the task", async () => {
    const ended = await send("ended before the subscription")
    const refused = await rpc("SubscribeToTask", { id: ended.id }, { "a2a-version": "1.0", accept: "text/event-stream" })
    expect(refused).toEqual([{ jsonrpc: "2.0", id: 1, error: expect.objectContaining({ code: -32004, data: [expect.objectContaining({ reason: "UNSUPPORTED_OPERATION" })] }) }])
    const rest = await fetch(`${node.baseUrl}/a2a/v1/tasks/${ended.id}:subscribe`, {
      method: "POST",
      headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}`, "a2a-version": "1.0", accept: "text/event-stream" }
    })
    expect(rest.status).toBe(400)
    expect(((await rest.json()) as any).error.details).toEqual([expect.objectContaining({ reason: "UNSUPPORTED_OPERATION", domain: "a2a-protocol.org" })])
    // another person's ended task is still not found, never revealed as ended
    const colleagueKey = await cliLogin(node, await addPerson(node, "a2a-v1-subscriber", { org: "member", workspace: "member" }))
    const theirs = await fetch(`${node.baseUrl}/a2a/v1/tasks/${ended.id}:subscribe`, { method: "POST", headers: { authorization: `Bearer ${colleagueKey}`, "a2a-version": "1.0" } })
    expect(theirs.status).toBe(404)
    const v03 = await rpc("tasks/resubscribe", { id: ended.id }, { accept: "text/event-stream" })
    expect(v03.at(-1).result).toMatchObject({ kind: "status-update", taskId: ended.id, status: { state: "completed" } })
  })
})

describe("ListTasks", () => {
  it("pages through the caller's own tasks, newest first, with a cursor; another person's tasks are never listed", async () => {
    const colleagueKey = await cliLogin(node, await addPerson(node, "a2a-v1-colleague", { org: "member", workspace: "member" }))
    const colleague = await jsonRpcClient(colleagueKey)
    const theirs = await send("the colleague's task", colleague)
    const first = await send("list me first")
    const context = first.contextId
    const mine = [first]
    for (const text of ["two", "three", "four", "five"]) {
      const next = await v1.sendMessage(textMessage(text, { contextId: context }))
      mine.push(next as Task)
    }
    const seen: Array<string> = []
    let pageToken = ""
    let pages = 0
    do {
      const page = await v1.listTasks(list({ contextId: context, pageSize: 2, pageToken }))
      expect(page.pageSize).toBe(2)
      expect(page.totalSize).toBe(5)
      expect(page.tasks.length).toBeLessThanOrEqual(2)
      // artifacts only when asked
      for (const task of page.tasks) expect(task.artifacts).toEqual([])
      seen.push(...page.tasks.map((task) => task.id))
      pageToken = page.nextPageToken
      pages++
    } while (pageToken !== "")
    expect(pages).toBe(3)
    expect(seen).toEqual(mine.map((task) => task.id).reverse())

    // the whole list: the caller's tasks only, never the colleague's; and the colleague sees only theirs
    const all = await v1.listTasks(list({ pageSize: 100, includeArtifacts: true }))
    expect(all.tasks.map((task) => task.id)).not.toContain(theirs.id)
    expect(all.tasks.find((task) => task.id === first.id)?.artifacts).toHaveLength(1)
    const colleagues = await colleague.listTasks(list({}))
    expect(colleagues.tasks.map((task) => task.id)).toEqual([theirs.id])

    // by state
    const canceled = await v1.listTasks(list({ status: "TASK_STATE_CANCELED", pageSize: 100 }))
    for (const task of canceled.tasks) expect(task.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    // a page token not given by ListTasks, or a page too large, is invalid params
    expect((await rpc("ListTasks", { pageToken: "nonsense" }, { "a2a-version": "1.0" })).error.code).toBe(-32602)
    expect((await rpc("ListTasks", { pageSize: 101 }, { "a2a-version": "1.0" })).error.code).toBe(-32602)
  })
})

describe("proto field names (ProtoJSON)", () => {
  it("ListTasks and GetTask take the proto names of their params (context_id, page_size, page_token, include_artifacts, history_length) as the JSON names", async () => {
    const first = await send("proto names one")
    const second = await v1.sendMessage(textMessage("proto names two", { contextId: first.contextId })) as Task
    const v1rpc = (method: string, params: unknown) => rpc(method, params, { "a2a-version": "1.0" })
    const page = await v1rpc("ListTasks", { context_id: first.contextId, page_size: 1, include_artifacts: true, history_length: 1 })
    expect(page.result, JSON.stringify(page)).toMatchObject({ pageSize: 1, totalSize: 2 })
    expect(page.result.tasks.map((task: any) => task.id)).toEqual([second.id])
    expect(page.result.tasks[0].artifacts).toHaveLength(1)
    expect(page.result.tasks[0].history).toHaveLength(1)
    const next = await v1rpc("ListTasks", { context_id: first.contextId, page_size: 1, page_token: page.result.nextPageToken, status: "TASK_STATE_COMPLETED" })
    expect(next.result.tasks.map((task: any) => task.id)).toEqual([first.id])
    // without include_artifacts the field is left out, not empty (1.0, ListTasks)
    expect(next.result.tasks[0]).not.toHaveProperty("artifacts")
    expect(next.result.nextPageToken).toBe("")
    const read = await v1rpc("GetTask", { id: first.id, history_length: 1 })
    expect(read.result.history).toHaveLength(1)
    // a name that is neither is still refused
    expect((await v1rpc("ListTasks", { context_identifier: first.contextId })).error.code).toBe(-32602)
  })
})

describe("one task, two wires", () => {
  it("a task sent in 0.3 is read in 1.0, and one sent in 1.0 is read (and continued) in 0.3", async () => {
    const sent = await v03.sendMessage({ message: { kind: "message", role: "user", messageId: randomUUID(), parts: [{ kind: "text", text: "from 0.3" }] } })
    const task03 = (sent as { result: V03Task }).result
    const read = await v1.getTask(getRequest(task03.id))
    expect(read).toMatchObject({ id: task03.id, contextId: task03.contextId })
    expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(textOf(read.history[0].parts)).toBe("from 0.3")
    expect(textOf(read.artifacts[0].parts)).toBe("You said: from 0.3")

    const task1 = await send("from 1.0")
    const read03 = (await v03.getTask({ id: task1.id })) as { result: V03Task }
    expect(read03.result).toMatchObject({ kind: "task", id: task1.id, contextId: task1.contextId, status: { state: "completed" } })
    expect(read03.result.history![0]).toMatchObject({ kind: "message", role: "user", parts: [{ kind: "text", text: "from 1.0" }] })
    // the 1.0 task's context continues in 0.3
    const continued = (await v03.sendMessage({ message: { kind: "message", role: "user", messageId: randomUUID(), contextId: task1.contextId, parts: [{ kind: "text", text: "/memory" }] } })) as { result: V03Task }
    expect(continued.result.contextId).toBe(task1.contextId)
    expect(continued.result.status.state).toBe("completed")
  })
})

describe("the HTTP+JSON binding (/a2a/v1)", () => {
  it("the 1.x client's REST transport: send, stream, get, list with paging, cancel, subscribe and the extended card", async () => {
    const rest = await restClient(node.bootstrap.workspaceKey)
    expect(rest.protocolVersion).toBe("1.0")
    const card = await rest.getAgentCard()
    expect(card.name).toBe(`${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug} assistant`)

    const task = await send("over rest", rest)
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(textOf(task.artifacts[0]?.parts)).toBe("You said: over rest")
    expect((await rest.getTask(getRequest(task.id, 0))).history).toEqual([])

    const streamed = await readStream(rest.sendMessageStream(textMessage("/long 9", { contextId: task.contextId })))
    expect(streamed[0].payload?.$case).toBe("task")
    const end = streamed.at(-1)!.payload!
    expect(end.$case === "statusUpdate" && end.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)

    // the context's two tasks, one a page, newest first
    const first = await rest.listTasks(list({ contextId: task.contextId, pageSize: 1 }))
    expect(first.totalSize).toBe(2)
    const second = await rest.listTasks(list({ contextId: task.contextId, pageSize: 1, pageToken: first.nextPageToken }))
    expect([...first.tasks, ...second.tasks].map((t) => t.id).reverse()).toEqual([task.id, (streamed[0].payload!.value as Task).id])
    expect(second.nextPageToken).toBe("")

    let runningId = ""
    let canceled: Task | undefined
    let followed: Promise<Array<StreamResponse>> | undefined
    await readStream(rest.sendMessageStream(textMessage("/slow 150\n/long 60")), async (event) => {
      if (event.payload?.$case === "task") runningId = event.payload.value.id
      if (event.payload?.$case === "artifactUpdate" && followed === undefined) {
        // canceled once the subscription follows it: an ended task is not subscribed to
        let following!: () => void
        const opened = new Promise<void>((resolve) => (following = resolve))
        followed = readStream(rest.resubscribeTask(subscribe(runningId)), () => following())
        await opened
        canceled = await rest.cancelTask(cancel(runningId))
      }
    })
    expect(canceled?.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    const last = (await followed!).at(-1)!.payload!
    expect(last.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    await expect(rest.cancelTask(cancel(runningId))).rejects.toMatchObject({ name: "TaskNotCancelableError", statusCode: 400 })
    await expect(rest.getTask(getRequest(`a2a_${randomUUID().replaceAll("-", "")}`))).rejects.toMatchObject({ name: "TaskNotFoundError", statusCode: 404 })
  })

  it("on the wire: a 1.0 request only, google.rpc.Status errors, push configs refused", async () => {
    const headers = { authorization: `Bearer ${node.bootstrap.workspaceKey}`, "content-type": "application/json" }
    const body = JSON.stringify({ message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "x" }] } })
    const unversioned = await fetch(`${node.baseUrl}/a2a/v1/message:send`, { method: "POST", headers, body })
    expect(unversioned.status).toBe(400)
    expect(((await unversioned.json()) as any).error.details[0]).toMatchObject({ reason: "VERSION_NOT_SUPPORTED", domain: "a2a-protocol.org" })
    const push = await fetch(`${node.baseUrl}/a2a/v1/tasks/a2a_x/pushNotificationConfigs`, { method: "POST", headers: { ...headers, "a2a-version": "1.0" }, body: "{}" })
    expect(push.status).toBe(400)
    expect(((await push.json()) as any).error).toMatchObject({ status: "FAILED_PRECONDITION", details: [{ reason: "PUSH_NOTIFICATION_NOT_SUPPORTED" }] })
    const anonymous = await fetch(`${node.baseUrl}/a2a/v1/tasks`, { headers: { "a2a-version": "1.0" } })
    expect(anonymous.status).toBe(401)
  })
})
