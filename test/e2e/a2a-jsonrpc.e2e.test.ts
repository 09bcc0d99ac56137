/**
 * The A2A endpoint as JSON-RPC 2.0, raw over fetch (spec 4.3, 5 rule 13, 7.4, docs/decisions.md on
 * batches, docs/a2a.md on notifications): the envelope checks and every error code of 7.4, batches
 * answered entry by entry in order, notifications that run answered with nothing (those refused as
 * requests with id null), refusals of the checkpoint as -32000 with their HTTP meaning in `data`,
 * and 401 for a missing or wrong Bearer before any JSON-RPC is read.
 *
 * -32603 (internal error) is not reached: no request a client can make fails inside the server.
 */
import { createParser } from "eventsource-parser"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadConfig } from "../../src/platform/Config.ts"
import { addPerson, bootstrapPlace, cliLogin } from "../support/people.ts"
import { addKey } from "../support/places.ts"
import { sseEnvelopes } from "../support/sse.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

let node: TestNode

beforeAll(async () => {
  node = await startTestNode({ assistant: { ...loadConfig({}).assistant, chatRateLimitPerMinute: 100_000 } })
})
afterAll(async () => {
  await node?.stop()
})

interface RawReply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly body: any
}

/** POST /a2a (or `path`) with a raw body (a string is sent as is, anything else as JSON). */
const post = async (
  body: unknown,
  options: { readonly key?: string | null; readonly target?: TestNode; readonly headers?: Record<string, string>; readonly path?: string } = {}
): Promise<RawReply> => {
  const target = options.target ?? node
  const key = options.key === undefined ? target.bootstrap.workspaceKey : options.key
  const response = await fetch(`${target.baseUrl}${options.path ?? "/a2a"}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...options.headers },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: response.status, headers: response.headers, text, body: parsed }
}

/** One JSON-RPC call answered as JSON: asserts HTTP 200 and a JSON-RPC 2.0 envelope, returns it. */
const rpc = async (body: unknown, options: Parameters<typeof post>[1] = {}) => {
  const reply = await post(body, options)
  expect(reply.status, reply.text).toBe(200)
  expect(reply.headers.get("content-type")).toBe("application/json")
  return reply.body
}

const request = (method: string, params?: unknown, id: string | number | null = randomUUID()) => ({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) })

const message = (text: string, extra: Record<string, unknown> = {}) => ({ message: { kind: "message", role: "user", messageId: randomUUID(), parts: [{ kind: "text", text }], ...extra } })

/** Asserts an error answer `{jsonrpc, id, error: {code, message, data?}}` and nothing else; returns the error. */
const expectRpcError = (answer: any, id: unknown, code: number) => {
  expect(answer, JSON.stringify(answer)).toMatchObject({ jsonrpc: "2.0", id, error: { code } })
  expect(Object.keys(answer).sort()).toEqual(["error", "id", "jsonrpc"])
  expect(typeof answer.error.message).toBe("string")
  expect(answer.error.message.trim()).not.toBe("")
  return answer.error as { code: number; message: string; data?: any }
}

const expectRpcResult = (answer: any, id: unknown) => {
  expect(answer, JSON.stringify(answer)).toMatchObject({ jsonrpc: "2.0", id })
  expect(Object.keys(answer).sort()).toEqual(["id", "jsonrpc", "result"])
  return answer.result
}

/** A completed task of the bootstrap workspace. */
const completedTask = async (text = "hello") => {
  const answer = await rpc(request("message/send", message(text), 1))
  const task = expectRpcResult(answer, 1)
  expect(task.status.state).toBe("completed")
  return task as { id: string; contextId: string; history: Array<unknown> }
}

/** message/stream or tasks/resubscribe read to its end: the `data:` envelopes in order. */
const streamRpc = async (body: unknown, onEnvelope?: (envelope: any) => void) => {
  const response = await fetch(`${node.baseUrl}/a2a`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", authorization: `Bearer ${node.bootstrap.workspaceKey}` },
    body: JSON.stringify(body)
  })
  const envelopes: Array<any> = []
  const parser = createParser({
    onEvent: (event) => {
      const envelope = JSON.parse(event.data)
      envelopes.push(envelope)
      onEnvelope?.(envelope)
    }
  })
  const decoder = new TextDecoder()
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }))
  return { status: response.status, contentType: response.headers.get("content-type"), envelopes }
}

// ---------------------------------------------------------------------------------------------

describe("authentication (spec 5, rule 13)", () => {
  it("a missing or invalid Bearer gets HTTP 401 and no JSON-RPC processing", async () => {
    const cases: Array<{ key: string | null; headers?: Record<string, string> }> = [
      { key: null },
      { key: "svc_not_a_real_key" },
      { key: null, headers: { authorization: "Basic dXNlcjpwYXNz" } }
    ]
    for (const { key, headers } of cases) {
      for (const body of [request("tasks/get", { id: "a2a_x" }, 1), "{not json", [request("tasks/get", { id: "a2a_x" }, 1)], request("tasks/get", { id: "a2a_x" })]) {
        const reply = await post(body, { key, headers })
        expect(reply.status, `${key} ${JSON.stringify(body)}`).toBe(401)
        expect(reply.headers.get("www-authenticate")).toMatch(/^Bearer /)
        expect(reply.headers.get("content-type")).toBe("application/json")
        expect(reply.body).toMatchObject({ error: { code: "unauthorized" } })
        expect(reply.body.jsonrpc).toBeUndefined()
      }
    }
    // nothing ran: no task was submitted without a key
    const before = await node.db.sql`select count(*)::int as n from ${node.db.table("a2a_tasks")}`
    expect((await post(request("message/send", message("sneaky"), 1), { key: null })).status).toBe(401)
    const after = await node.db.sql`select count(*)::int as n from ${node.db.table("a2a_tasks")}`
    expect(after[0].n).toBe(before[0].n)
  })
})

describe("-32700 parse error", () => {
  it("invalid JSON is answered with id null", async () => {
    for (const body of ["{not json", '{"jsonrpc":"2.0","id":1,"method":"tasks/get"', "", "[1,"]) {
      expectRpcError(await rpc(body), null, -32700)
    }
  })
})

describe("-32600 invalid request", () => {
  it("a wrong or missing jsonrpc member, keeping the id", async () => {
    expectRpcError(await rpc({ jsonrpc: "1.0", id: 1, method: "tasks/get", params: { id: "x" } }), 1, -32600)
    expectRpcError(await rpc({ id: "a", method: "tasks/get", params: { id: "x" } }), "a", -32600)
  })

  it("a missing or non-string method", async () => {
    expectRpcError(await rpc({ jsonrpc: "2.0", id: 2, params: { id: "x" } }), 2, -32600)
    for (const method of [5, null, { name: "tasks/get" }, ["tasks/get"]]) {
      expectRpcError(await rpc({ jsonrpc: "2.0", id: 3, method, params: { id: "x" } }), 3, -32600)
    }
  })

  it("an id of a wrong type is answered with id null", async () => {
    // 1e400 parses as Infinity: a number, but not one JSON-RPC can echo
    for (const id of ["true", "false", '{"n":1}', "[1]", "1e400"]) {
      expectRpcError(await rpc(`{"jsonrpc":"2.0","id":${id},"method":"tasks/get","params":{"id":"x"}}`), null, -32600)
    }
  })

  it("primitive or null params", async () => {
    for (const params of [5, "id", true, null]) {
      expectRpcError(await rpc({ jsonrpc: "2.0", id: 4, method: "tasks/get", params }), 4, -32600)
    }
  })

  it("a request that is not an object, and an empty batch, with id null", async () => {
    for (const body of ["5", '"tasks/get"', "null", "true"]) expectRpcError(await rpc(body), null, -32600)
    expectRpcError(await rpc([]), null, -32600)
  })

  it("an invalid request without an id is still answered (it is not a notification)", async () => {
    expectRpcError(await rpc({ jsonrpc: "1.0", method: "tasks/get", params: { id: "x" } }), null, -32600)
  })
})

describe("-32601 method not found", () => {
  it("an unknown method, echoing the id of either type", async () => {
    const error = expectRpcError(await rpc(request("tasks/list", {}, 9)), 9, -32601)
    expect(error.message).toContain("tasks/list")
    expectRpcError(await rpc(request("message/sendd", message("x"), "nine")), "nine", -32601)
    expectRpcError(await rpc(request("", {}, 10)), 10, -32601)
  })
})

describe("-32602 invalid params", () => {
  it("positional (array) params", async () => {
    for (const method of ["message/send", "tasks/get", "tasks/cancel", "agent/getAuthenticatedExtendedCard"]) {
      expectRpcError(await rpc(request(method, [{ id: "a2a_x" }], 11)), 11, -32602)
    }
  })

  it("message/send without a message, or with a message that is not a user's", async () => {
    const messageId = randomUUID()
    const bad = [
      {},
      { message: null },
      { message: { role: "user", messageId, parts: [] } },
      { message: { role: "user", parts: [{ kind: "text", text: "x" }] } },
      { message: { role: "agent", messageId, parts: [{ kind: "text", text: "x" }] } },
      { message: { role: "user", messageId, parts: [{ kind: "image", url: "https://example.test/a.png" }] } },
      { message: { role: "user", messageId, parts: [{ kind: "data", data: [1, 2] }] } },
      { message: { role: "user", messageId, parts: [{ kind: "text", text: 5 }] } },
      { message: { role: "user", messageId, parts: [{ kind: "text", text: "x" }] }, configuration: { historyLength: -1 } }
    ]
    for (const params of bad) expectRpcError(await rpc(request("message/send", params, 12)), 12, -32602)
  })

  it("message/stream with bad params is refused as a stream of that one error", async () => {
    const reply = await post(request("message/stream", { message: { role: "user", messageId: "m", parts: [{ kind: "text" }] } }, 13), { headers: { accept: "text/event-stream" } })
    expect(reply.headers.get("content-type")).toBe("text/event-stream")
    const envelopes = sseEnvelopes(reply.text)
    expect(envelopes).toHaveLength(1)
    expectRpcError(envelopes[0], 13, -32602)
    expectRpcError(await rpc(request("message/stream", [], 14)), 14, -32602)
  })

  it("tasks/get with a bad historyLength, or without an id", async () => {
    const task = await completedTask()
    for (const historyLength of [-1, 1.5, "2", null]) {
      expectRpcError(await rpc(request("tasks/get", { id: task.id, historyLength }, 15)), 15, -32602)
    }
    expectRpcError(await rpc(request("tasks/get", {}, 16)), 16, -32602)
    expectRpcError(await rpc(request("tasks/get", { id: 5 }, 16)), 16, -32602)
    expectRpcError(await rpc(request("tasks/cancel", {}, 17)), 17, -32602)
  })

  it("a context id this agent did not issue", async () => {
    const error = expectRpcError(await rpc(request("message/send", message("x", { contextId: "ctx_not-mine" }), 18)), 18, -32602)
    expect(error.data).toEqual({ reason: "invalid_context_id" })
  })

  it("text Postgres cannot store (a NUL character, a lone surrogate) is invalid params, not an internal error", async () => {
    const before = await node.db.sql`select count(*)::int as n from ${node.db.table("a2a_tasks")}`
    expectRpcError(await rpc(request("message/send", message("a\u0000b"), 19)), 19, -32602)
    expectRpcError(await rpc(request("message/send", { message: { role: "user", messageId: "m\u0000", parts: [{ kind: "text", text: "x" }] } }, 20)), 20, -32602)
    expectRpcError(await rpc('{"jsonrpc":"2.0","id":21,"method":"message/send","params":{"message":{"role":"user","messageId":"m21","parts":[{"kind":"text","text":"\\ud800"}]}}}'), 21, -32602)
    const after = await node.db.sql`select count(*)::int as n from ${node.db.table("a2a_tasks")}`
    expect(after[0].n).toBe(before[0].n)
  })

  it("a message to a task that is not waiting for input", async () => {
    const task = await completedTask()
    const error = expectRpcError(await rpc(request("message/send", message("more", { taskId: task.id }), 22)), 22, -32602)
    expect(error.data).toEqual({ reason: "task_terminal" })
  })
})

describe("message parts: text, data and file (A2A v0.3)", () => {
  const base64 = (text: string) => Buffer.from(text, "utf8").toString("base64")
  const sendParts = (parts: Array<unknown>, id: number | string) =>
    rpc(request("message/send", { message: { kind: "message", role: "user", messageId: randomUUID(), parts } }, id))
  const counts = async () => {
    const [{ tasks }] = await node.db.sql`select count(*)::int as tasks from ${node.db.table("a2a_tasks")}`
    const [{ files }] = await node.db.sql`select count(*)::int as files from ${node.db.table("files")}`
    return { tasks, files }
  }

  it("a data part is accepted: the turn reads its JSON, the history keeps the part as sent", async () => {
    const data = { key: "value", number: 123, nested: { array: [1, 2, 3] } }
    const task = expectRpcResult(await sendParts([{ kind: "text", text: "look at this" }, { kind: "data", data, metadata: { ignored: true } }], 60), 60)
    expect(task.status.state).toBe("completed")
    expect(task.artifacts[0].parts[0].text).toBe(`You said: look at this\n\n${JSON.stringify(data)}`)
    const kept = expectRpcResult(await rpc(request("tasks/get", { id: task.id }, 61)), 61)
    expect(kept.history[0].parts).toEqual([{ kind: "text", text: "look at this" }, { kind: "data", data }])
  })

  it("a file part with bytes is an attachment of the turn: the turn reads it, the history names the stored attachment", async () => {
    const task = expectRpcResult(
      await sendParts([{ kind: "text", text: "what does the note say?" }, { kind: "file", file: { name: "note.txt", mimeType: "text/plain", bytes: base64("the printer is on fire") } }], 62),
      62
    )
    expect(task.status.state).toBe("completed")
    // a text file reaches the model as text, as a chat request's attachment does
    expect(task.artifacts[0].parts[0].text).toContain("Attachment note.txt:\nthe printer is on fire")
    const [part] = task.history[0].parts.slice(1)
    expect(part).toEqual({ kind: "file", file: { name: "note.txt", mimeType: "text/plain", uri: expect.stringMatching(/^urn:svc:attachment:gen_/) } })
    const fileId = part.file.uri.slice("urn:svc:attachment:".length)
    const [stored] = await node.db.sql`select name, media_type, size from ${node.db.table("files")} where file_id = ${fileId}`
    expect(stored).toEqual({ name: "note.txt", media_type: "text/plain", size: 22 })
    // a file part alone, without a name: it is named by its place
    const alone = expectRpcResult(await sendParts([{ kind: "file", file: { mimeType: "text/markdown", bytes: base64("# Title") } }], 63), 63)
    expect(alone.artifacts[0].parts[0].text).toContain("Attachment file-1:\n# Title")
    expect(alone.history[0].parts[0].file).toEqual({ mimeType: "text/markdown", uri: expect.stringMatching(/^urn:svc:attachment:gen_/) })
  })

  it("a file part that breaks an attachment rule is refused, and nothing runs or is stored", async () => {
    const before = await counts()
    const refused = async (parts: Array<unknown>, code: number, reason?: string) => {
      const error = expectRpcError(await sendParts(parts, 64), 64, code)
      if (reason !== undefined) expect(error.data).toEqual({ code: "attachment_refused", reason })
      return error
    }
    const text = { kind: "text", text: "see attached" }
    // a type no attachment may have: A2A's ContentTypeNotSupportedError
    const unsupported = await refused([text, { kind: "file", file: { name: "test.xyz", mimeType: "application/x-unknown", bytes: base64("test data") } }], -32005, "unsupported_type")
    expect(unsupported.message.toLowerCase()).toContain("content type not supported")
    await refused([{ kind: "file", file: { name: "x.bin", bytes: base64("no type") } }], -32005, "unsupported_type")
    // a file by URI: the platform fetches nothing a caller names (A2A's UnsupportedOperationError)
    const byUri = await refused([text, { kind: "file", file: { name: "a.txt", mimeType: "text/plain", uri: "https://example.test/a.txt" } }], -32004, "file_by_uri")
    expect(byUri.message.toLowerCase()).toContain("operation is not supported")
    // bytes that are not what the type says, an empty file, more than 10 files
    await refused([{ kind: "file", file: { name: "a.png", mimeType: "image/png", bytes: base64("not a png") } }], -32602, "content_mismatch")
    await refused([{ kind: "file", file: { name: "e.txt", mimeType: "text/plain", bytes: "" } }], -32602, "empty_file")
    const eleven = Array.from({ length: 11 }, (_, i) => ({ kind: "file", file: { name: `${i}.txt`, mimeType: "text/plain", bytes: base64("x") } }))
    await refused(eleven, -32602, "too_many_files")
    // not base64, or both bytes and a URI: bad params
    await refused([{ kind: "file", file: { mimeType: "text/plain", bytes: "INVALID_BASE64_CONTENT!" } }], -32602)
    await refused([{ kind: "file", file: { mimeType: "text/plain", bytes: base64("x"), uri: "https://example.test/x" } }], -32602)
    expect(await counts()).toEqual(before)
  })

  it("data Postgres cannot store is invalid params; a body nested too deep is refused before it is read", async () => {
    const before = await counts()
    expectRpcError(await sendParts([{ kind: "data", data: { "a\u0000": 1 } }], 65), 65, -32602)
    expectRpcError(await sendParts([{ kind: "data", data: { a: ["\ud800"] } }], 66), 66, -32602)
    let deep: unknown = 1
    for (let i = 0; i < 100; i++) deep = { deeper: deep }
    const refused = expectRpcError(await sendParts([{ kind: "data", data: deep }], 67), null, -32600)
    expect(refused.data).toEqual({ status: 400, code: "bad_request", reason: "json_too_deep" })
    expect(await counts()).toEqual(before)
  })

  it("an answer to the agent's question takes text and data parts, not files", async () => {
    const asked = expectRpcResult(await sendParts([{ kind: "text", text: "/ask Which colour? | red | blue" }], 68), 68)
    expect(asked.status.state).toBe("input-required")
    const answer = (parts: Array<unknown>, id: number) => rpc(request("message/send", { message: { role: "user", messageId: randomUUID(), taskId: asked.id, parts } }, id))
    const withFile = expectRpcError(await answer([{ kind: "file", file: { name: "a.txt", mimeType: "text/plain", bytes: base64("blue") } }], 69), 69, -32602)
    expect(withFile.data).toEqual({ reason: "file_in_answer" })
    const answered = expectRpcResult(await answer([{ kind: "data", data: { colour: "blue" } }], 70), 70)
    expect(answered.status.state).toBe("completed")
    expect(answered.history.at(-2).parts).toEqual([{ kind: "data", data: { colour: "blue" } }])
  })
})

describe("-32001, -32002, -32003", () => {
  it("tasks/get and tasks/cancel of an unknown or malformed id: -32001", async () => {
    for (const id of [`a2a_${"0".repeat(32)}`, "a2a_short", "nothing like it", ""]) {
      expectRpcError(await rpc(request("tasks/get", { id }, 30)), 30, -32001)
      expectRpcError(await rpc(request("tasks/cancel", { id }, 31)), 31, -32001)
    }
    expectRpcError(await rpc(request("message/send", message("x", { taskId: `a2a_${"0".repeat(32)}` }), 32)), 32, -32001)
  })

  it("tasks/resubscribe of an unknown task: -32001, the stream's one event", async () => {
    const reply = await post(request("tasks/resubscribe", { id: `a2a_${"0".repeat(32)}` }, 33), { headers: { accept: "text/event-stream" } })
    expect(reply.headers.get("content-type")).toBe("text/event-stream")
    const envelopes = sseEnvelopes(reply.text)
    expect(envelopes).toHaveLength(1)
    expectRpcError(envelopes[0], 33, -32001)
  })

  it("tasks/cancel of a task that ended: -32002", async () => {
    const task = await completedTask()
    const error = expectRpcError(await rpc(request("tasks/cancel", { id: task.id }, 34)), 34, -32002)
    expect(error.data).toBeUndefined()
  })

  it("every tasks/pushNotificationConfig/* method: -32003, whatever its params", async () => {
    const task = await completedTask()
    for (const method of ["set", "get", "list", "delete", "anything"]) {
      expectRpcError(await rpc(request(`tasks/pushNotificationConfig/${method}`, { id: task.id, taskId: task.id, pushNotificationConfig: { url: "https://example.test/hook" } }, 35)), 35, -32003)
    }
    expectRpcError(await rpc(request("tasks/pushNotificationConfig/set", [1, 2], 36)), 36, -32003)
    expectRpcError(await rpc(request("tasks/pushNotificationConfig/get", undefined, 37)), 37, -32003)
  })
})

describe("-32009: the A2A-Version header (A2A 1.0's negotiation)", () => {
  const tasks = async () => (await node.db.sql`select count(*)::int as n from ${node.db.table("a2a_tasks")}`)[0].n as number

  it("a version this endpoint does not serve is refused before the method runs, sending or streaming, and nothing is started", async () => {
    const before = await tasks()
    for (const version of ["1", "2.0", "0.2", "banana"]) {
      const error = expectRpcError(await rpc(request("message/send", message("hello"), 41), { headers: { "a2a-version": version } }), 41, -32009)
      expect(error.message).toContain(`'${version}'`)
      expect(error.data).toEqual({ supportedVersions: ["0.3", "1.0"] })
    }
    // a 1.0 method name is refused the same way: the version is read first
    expectRpcError(await rpc(request("SendMessage", message("hello"), 42), { headers: { "a2a-version": "2.0" } }), 42, -32009)
    // a stream is not opened: the refusal is a JSON answer
    expectRpcError(await rpc(request("message/stream", message("hello"), 43), { headers: { "a2a-version": "2.0", accept: "text/event-stream" } }), 43, -32009)
    // every entry of a batch, and a notification too (the request as a whole is refused)
    const batch = await rpc([request("tasks/get", { id: "x" }, 44), { jsonrpc: "2.0", method: "message/send", params: message("hello") }], { headers: { "a2a-version": "2.0" } })
    expect(batch.map((answer: any) => [answer.id, answer.error.code])).toEqual([[44, -32009], [null, -32009]])
    expect(await tasks()).toBe(before)
  })

  it("1.0 is served too, with its own method names: a 0.3 name under A2A-Version 1.0 is not found, and nothing is started", async () => {
    const before = await tasks()
    expectRpcError(await rpc(request("message/send", message("hello"), 46), { headers: { "a2a-version": "1.0" } }), 46, -32601)
    expectRpcError(await rpc(request("message/stream", message("hello"), 47), { headers: { "a2a-version": "1.0", accept: "text/event-stream" } }), 47, -32601)
    expect(await tasks()).toBe(before)
  })

  it("0.3 (with or without a patch) is served, as is a request without the header", async () => {
    for (const version of ["0.3", "0.3.0", " 0.3 "]) {
      const task = expectRpcResult(await rpc(request("message/send", message("hello"), 45), { headers: { "a2a-version": version } }), 45)
      expect(task.status.state).toBe("completed")
    }
  })
})

describe("the endpoint", () => {
  it("answers on /a2a/ as on /a2a (a client that joins / to the card's URL posts there), in both versions", async () => {
    const sent = expectRpcResult(await rpc(request("message/send", message("hello"), 7), { path: "/a2a/" }), 7)
    expect(sent.status.state).toBe("completed")
    const read = await rpc(request("GetTask", { id: sent.id }), { path: "/a2a/", headers: { "A2A-Version": "1.0" } })
    expect(read.result).toMatchObject({ id: sent.id, status: { state: "TASK_STATE_COMPLETED" } })
  })
})

describe("-32603 internal error", () => {
  it("storage that fails under a method: -32603, with the retryable 503 in data", async () => {
    const broken = await startTestNode()
    try {
      expectRpcResult(await rpc(request("message/send", message("before"), 50), { target: broken }), 50)
      // the read model's table goes away under the running node (a failed disk, a bad migration)
      await broken.db.sql`drop table ${broken.db.sql(`${broken.db.schema}.a2a_tasks`)}`
      // a task this node holds in memory is read from there (docs/decisions.md, issue 24): one it does not is read from the table
      const uncached = `a2a_${randomUUID().replaceAll("-", "")}`
      const error = expectRpcError(await rpc(request("tasks/get", { id: uncached }, 51), { target: broken }), 51, -32603)
      expect(error.data).toEqual({ status: 503, code: "unavailable", reason: "database_unavailable" })
    } finally {
      await broken.stop()
    }
  })
})

describe("-32000: a refusal of the checkpoint keeps its HTTP meaning in data", () => {
  it("a key's own rate (issue 24): data {status 429, code rate_limited, reason key_requests, retryAfterSeconds}; another key is not held back", async () => {
    const limited = await startTestNode({ assistant: { ...loadConfig({}).assistant, chatRateLimitPerMinute: 100_000, keyRateLimitPerMinute: 2 } })
    try {
      const first = await rpc(request("message/send", message("one"), 40), { target: limited })
      expectRpcResult(first, 40)
      expectRpcResult(await rpc(request("message/send", message("two"), 41), { target: limited }), 41)
      const error = expectRpcError(await rpc(request("message/send", message("three"), 42), { target: limited }), 42, -32000)
      expect(error.data).toEqual({ status: 429, code: "rate_limited", reason: "key_requests", retryAfterSeconds: expect.any(Number) })
      expect(error.data.retryAfterSeconds).toBeGreaterThanOrEqual(1)
      expect(error.data.retryAfterSeconds).toBeLessThanOrEqual(60)
      // the same refusal of a stream is the stream's one event
      const reply = await post(request("message/stream", message("four"), 43), { target: limited, headers: { accept: "text/event-stream" } })
      expect(reply.headers.get("content-type")).toBe("text/event-stream")
      expect(expectRpcError(sseEnvelopes(reply.text)[0], 43, -32000).data).toMatchObject({ status: 429, code: "rate_limited", reason: "key_requests" })
      // reads are not turns: not limited
      expectRpcResult(await rpc(request("tasks/get", { id: first.result.id }, 44), { target: limited }), 44)
      // another key of the same workspace has a budget of its own
      const person = await addPerson(limited, "integrator", { org: "member", workspace: "member" })
      const other = await addKey(limited, await bootstrapPlace(limited), person.userId, "second integration")
      expectRpcResult(await rpc(request("message/send", message("mine"), 45), { target: limited, key: other.raw }), 45)
      expectRpcResult(await rpc(request("message/send", message("mine too"), 46), { target: limited, key: other.raw }), 46)
      expect(expectRpcError(await rpc(request("message/send", message("one too many"), 47), { target: limited, key: other.raw }), 47, -32000).data)
        .toMatchObject({ status: 429, reason: "key_requests" })
    } finally {
      await limited.stop()
    }
  })

  it("a key's sends are not counted against the workspace's chat rate; a person's are (data reason chat_requests)", async () => {
    const limited = await startTestNode({ assistant: { ...loadConfig({}).assistant, chatRateLimitPerMinute: 1 } })
    try {
      for (const id of [50, 51, 52]) expectRpcResult(await rpc(request("message/send", message(`key ${id}`), id), { target: limited }), id)
      // a CLI login is a person: their sends take from the workspace's chat requests
      const person = await addPerson(limited, "developer", { org: "member", workspace: "member" })
      const login = await cliLogin(limited, person)
      expectRpcResult(await rpc(request("message/send", message("mine"), 53), { target: limited, key: login }), 53)
      const error = expectRpcError(await rpc(request("message/send", message("mine again"), 54), { target: limited, key: login }), 54, -32000)
      expect(error.data).toMatchObject({ status: 429, code: "rate_limited", reason: "chat_requests", retryAfterSeconds: expect.any(Number) })
      // and the key goes on
      expectRpcResult(await rpc(request("message/send", message("key again"), 55), { target: limited }), 55)
    } finally {
      await limited.stop()
    }
  })
})

describe("requests that succeed", () => {
  it("echoes string, number and null ids; params may be left out of the extended card call", async () => {
    const task = await completedTask()
    expect(expectRpcResult(await rpc(request("tasks/get", { id: task.id }, "str-id")), "str-id").id).toBe(task.id)
    expect(expectRpcResult(await rpc(request("tasks/get", { id: task.id }, 0)), 0).id).toBe(task.id)
    expect(expectRpcResult(await rpc(request("tasks/get", { id: task.id }, -7.5)), -7.5).id).toBe(task.id)
    // id null is a request, not a notification: it is answered
    expect(expectRpcResult(await rpc(request("tasks/get", { id: task.id }, null)), null).id).toBe(task.id)
    const card = expectRpcResult(await rpc(request("agent/getAuthenticatedExtendedCard", undefined, 44)), 44)
    expect(card).toMatchObject({ protocolVersion: "0.3.0", url: `${node.baseUrl}/a2a` })
    expect(expectRpcResult(await rpc(request("agent/getAuthenticatedExtendedCard", {}, 45)), 45).skills.length).toBe(card.skills.length)
  })

  it("message/send with configuration.historyLength clamps the history of the returned Task", async () => {
    const none = expectRpcResult(await rpc(request("message/send", { ...message("hi"), configuration: { historyLength: 0 } }, 46)), 46)
    expect(none).toMatchObject({ status: { state: "completed" }, history: [] })
    const one = expectRpcResult(await rpc(request("message/send", { ...message("hi"), configuration: { historyLength: 1 } }, 47)), 47)
    expect(one.history.map((m: any) => m.role)).toEqual(["agent"])
  })

  it("message/send with configuration.blocking false answers once the task is submitted", async () => {
    const task = expectRpcResult(await rpc(request("message/send", { ...message("/slow 100\n/long 12"), configuration: { blocking: false } }, 48)), 48)
    expect(["submitted", "working"]).toContain(task.status.state)
    let state = task.status.state
    for (let i = 0; i < 100 && state !== "completed"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      state = expectRpcResult(await rpc(request("tasks/get", { id: task.id }, 49)), 49).status.state
    }
    expect(state).toBe("completed")
  })

  it("message/stream: SSE whose data lines are response envelopes with the request's id", async () => {
    const { status, contentType, envelopes } = await streamRpc(request("message/stream", message("/long 7"), "stream-1"))
    expect(status).toBe(200)
    expect(contentType).toBe("text/event-stream")
    for (const envelope of envelopes) expectRpcResult(envelope, "stream-1")
    const kinds = envelopes.map((e) => e.result.kind)
    expect(kinds[0]).toBe("task")
    expect(envelopes[0].result.status.state).toBe("submitted")
    expect(kinds.at(-1)).toBe("status-update")
    expect(envelopes.at(-1).result).toMatchObject({ status: { state: "completed" }, final: true })
    expect(kinds.filter((k) => k === "artifact-update").length).toBeGreaterThan(1)
  })

  it("a question on the stream ends it at input-required; the answer on message/stream follows the task to completed", async () => {
    const asked = await streamRpc(request("message/stream", message("/ask Pick one | red | blue"), 50))
    const last = asked.envelopes.at(-1).result
    expect(last).toMatchObject({ kind: "status-update", status: { state: "input-required" }, final: true })
    expect(last.status.message.parts[0].text).toBe("Pick one (red / blue)")
    const taskId = asked.envelopes[0].result.id
    const answered = await streamRpc(request("message/stream", message("blue", { taskId }), 51))
    expect(answered.contentType).toBe("text/event-stream")
    for (const envelope of answered.envelopes) expect(expectRpcResult(envelope, 51)).toMatchObject({ taskId })
    expect(answered.envelopes.at(-1).result).toMatchObject({ kind: "status-update", status: { state: "completed" }, final: true })
    const task = expectRpcResult(await rpc(request("tasks/get", { id: taskId }, 52)), 52)
    expect(task.status.state).toBe("completed")
    expect(task.artifacts[0].parts[0].text).toContain('{"answer":"blue"}')
    // the answer's stream carries the response as it is written, the whole of it
    const chunks = answered.envelopes.map((e) => e.result).filter((r) => r.kind === "artifact-update")
    expect(chunks.map((c) => c.artifact.parts[0].text).join("")).toBe(task.artifacts[0].parts[0].text)
    expect(chunks.at(-1)).toMatchObject({ lastChunk: true })
  })
})

describe("notifications", () => {
  it("a request without an id that runs is answered with nothing (204), whether it succeeds or fails", async () => {
    const task = await completedTask()
    for (const notification of [
      { jsonrpc: "2.0", method: "tasks/get", params: { id: task.id } },
      { jsonrpc: "2.0", method: "tasks/get", params: { id: `a2a_${"0".repeat(32)}` } },
      { jsonrpc: "2.0", method: "tasks/cancel", params: { id: task.id } },
      { jsonrpc: "2.0", method: "tasks/pushNotificationConfig/set", params: {} }
    ]) {
      const reply = await post(notification)
      expect(reply.status, JSON.stringify(notification)).toBe(204)
      expect(reply.text).toBe("")
    }
  })

  it("a request without an id that names an unknown method or has invalid params is answered, with id null (as the A2A TCK requires)", async () => {
    expectRpcError(await rpc({ jsonrpc: "2.0", method: "message/ssend", params: {} }), null, -32601)
    expectRpcError(await rpc({ jsonrpc: "2.0", method: "no/such/method" }), null, -32601)
    expectRpcError(await rpc({ jsonrpc: "2.0", method: "message/send", params: { "": "not_a_dict" } }), null, -32602)
    expectRpcError(await rpc({ jsonrpc: "2.0", method: "tasks/get", params: [1] }), null, -32602)
    expectRpcError(await rpc({ jsonrpc: "2.0", method: "tasks/get", params: { historyLength: -1 } }), null, -32602)
    // and nothing of it ran: no task was submitted
    const before = await node.db.sql`select count(*)::int as n from ${node.db.table("a2a_tasks")}`
    expectRpcError(await rpc({ jsonrpc: "2.0", method: "message/send", params: { message: { role: "user", parts: [] } } }), null, -32602)
    const after = await node.db.sql`select count(*)::int as n from ${node.db.table("a2a_tasks")}`
    expect(after[0].n).toBe(before[0].n)
  })

  it("a notification still acts: a cancel without an id cancels the task", async () => {
    const started = expectRpcResult(await rpc(request("message/send", { ...message("/slow 200\n/long 60"), configuration: { blocking: false } }, 53)), 53)
    const reply = await post({ jsonrpc: "2.0", method: "tasks/cancel", params: { id: started.id } })
    expect(reply.status).toBe(204)
    expect(expectRpcResult(await rpc(request("tasks/get", { id: started.id }, 54)), 54).status.state).toBe("canceled")
    // the turn stops too, even when the cancel came before its run started (60 words, 200 ms per 3, would take 4 s)
    const [{ turn_id: turnId }] = await node.db.sql`select turn_id from ${node.db.table("a2a_tasks")} where task_id = ${started.id}`
    const until = Date.now() + 6_000
    let status: string | undefined
    for (;;) {
      const [row] = await node.db.sql`select status from ${node.db.table("runs")} where turn_id = ${turnId}`
      status = row?.status
      if ((status !== undefined && status !== "running") || Date.now() > until) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(status).toBe("stopped")
  })

  it("a batch of notifications that run is answered 204; one refused as a request is answered in the batch", async () => {
    const task = await completedTask()
    const reply = await post([
      { jsonrpc: "2.0", method: "tasks/get", params: { id: task.id } },
      { jsonrpc: "2.0", method: "tasks/cancel", params: { id: task.id } }
    ])
    expect(reply.status).toBe(204)
    expect(reply.text).toBe("")
    const answers = await rpc([
      { jsonrpc: "2.0", method: "tasks/get", params: { id: task.id } },
      { jsonrpc: "2.0", method: "unknown/method" }
    ])
    expect(answers).toHaveLength(1)
    expectRpcError(answers[0], null, -32601)
  })
})

describe("batches", () => {
  it("answers every entry in order, valid and invalid, leaving out notifications", async () => {
    const task = await completedTask()
    const answers = await rpc([
      request("tasks/get", { id: task.id, historyLength: 1 }, 1),
      { jsonrpc: "2.0", id: 2, params: {} },
      { jsonrpc: "2.0", method: "tasks/get", params: { id: task.id } },
      request("no/such/method", {}, "three"),
      5,
      request("tasks/get", [task.id], 4),
      request("tasks/get", { id: `a2a_${"0".repeat(32)}` }, 5),
      request("tasks/cancel", { id: task.id }, 6),
      request("tasks/pushNotificationConfig/get", { id: task.id }, 7),
      { jsonrpc: "2.0", id: true, method: "tasks/get", params: { id: task.id } },
      request("agent/getAuthenticatedExtendedCard", undefined, 8)
    ])
    expect(Array.isArray(answers)).toBe(true)
    expect(answers).toHaveLength(10)
    expect(expectRpcResult(answers[0], 1).history).toHaveLength(1)
    expectRpcError(answers[1], 2, -32600)
    expectRpcError(answers[2], "three", -32601)
    expectRpcError(answers[3], null, -32600)
    expectRpcError(answers[4], 4, -32602)
    expectRpcError(answers[5], 5, -32001)
    expectRpcError(answers[6], 6, -32002)
    expectRpcError(answers[7], 7, -32003)
    expectRpcError(answers[8], null, -32600)
    expect(expectRpcResult(answers[9], 8).protocolVersion).toBe("0.3.0")
  })

  it("a message/send in a batch runs; a streaming method in a batch is -32600 and does not run", async () => {
    const before = await node.db.sql`select count(*)::int as n from ${node.db.table("a2a_tasks")}`
    const answers = await rpc([
      request("message/send", message("batched"), 1),
      request("message/stream", message("streamed"), 2),
      request("tasks/resubscribe", { id: `a2a_${"0".repeat(32)}` }, 3)
    ])
    expect(answers).toHaveLength(3)
    expect(expectRpcResult(answers[0], 1)).toMatchObject({ kind: "task", status: { state: "completed" } })
    expect(expectRpcError(answers[1], 2, -32600).message).toContain("message/stream")
    expectRpcError(answers[2], 3, -32600)
    const after = await node.db.sql`select count(*)::int as n from ${node.db.table("a2a_tasks")}`
    expect(after[0].n).toBe(before[0].n + 1)
  })

  it("an id repeated in a batch is -32600 for each repetition; the first use runs", async () => {
    const task = await completedTask()
    const answers = await rpc([
      request("tasks/get", { id: task.id }, 1),
      request("tasks/get", { id: task.id }, 1),
      request("tasks/get", { id: task.id }, "1"),
      request("tasks/get", { id: task.id }, 1),
      request("tasks/get", { id: task.id }, null),
      request("tasks/get", { id: task.id }, null)
    ])
    expect(answers).toHaveLength(6)
    expect(expectRpcResult(answers[0], 1).id).toBe(task.id)
    expectRpcError(answers[1], 1, -32600)
    // "1" and 1 are different ids
    expect(expectRpcResult(answers[2], "1").id).toBe(task.id)
    expectRpcError(answers[3], 1, -32600)
    // id null says nothing about which request an answer belongs to; it may repeat
    expectRpcResult(answers[4], null)
    expectRpcResult(answers[5], null)
  })

  it("an id of a wrong type repeated in a batch is still answered with id null", async () => {
    const answers = await rpc([
      { jsonrpc: "2.0", id: true, method: "tasks/get", params: { id: "x" } },
      { jsonrpc: "2.0", id: true, method: "tasks/get", params: { id: "x" } },
      { jsonrpc: "2.0", id: false, method: "tasks/get", params: { id: "x" } },
      { jsonrpc: "2.0", id: false, method: "tasks/get", params: { id: "x" } }
    ])
    expect(answers).toHaveLength(4)
    for (const answer of answers) expectRpcError(answer, null, -32600)
  })

  it("a batch of one is answered as a batch of one", async () => {
    const task = await completedTask()
    const answers = await rpc([request("tasks/get", { id: task.id }, 1)])
    expect(answers).toHaveLength(1)
    expectRpcResult(answers[0], 1)
  })
})
