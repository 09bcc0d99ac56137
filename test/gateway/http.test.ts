import net from "node:net"
import uWS from "uWebSockets.js"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import {
  type HttpRequest,
  jsonError,
  MalformedJson,
  readJson,
  RequestAborted,
  route
} from "../../gateway/http.ts"
import { type Served, serve } from "../support/uws.ts"

let served: Served
let base: string
let port: number
let handlerCalls = 0
let lastAborted: { error: unknown; signalAborted: boolean } | undefined
let abortSeen: () => void = () => {}

/**
 * Sends raw requests on one connection, each once the previous response (ending as its pattern
 * says) has arrived: uWS closes a connection on which a request arrives while a response is pending.
 */
const rawSequence = (requests: Array<[request: string, responseEnd: RegExp]>): Promise<Array<string>> =>
  new Promise((resolve, reject) => {
    const responses: Array<string> = []
    let received = ""
    const socket = net.connect(port, "127.0.0.1", () => socket.write(requests[0][0]))
    socket.setEncoding("utf8")
    socket.on("data", (text: string) => {
      received += text
      if (!requests[responses.length][1].test(received)) return
      responses.push(received)
      received = ""
      if (responses.length < requests.length) socket.write(requests[responses.length][0])
      else {
        socket.destroy()
        resolve(responses)
      }
    })
    socket.on("error", reject)
    socket.on("close", () => reject(new Error(`connection closed after ${responses.length} responses`)))
  })

beforeAll(async () => {
  const app = uWS.App()
  route(app, "post", "/echo/:a/:b", async (req) => ({
    status: 200,
    json: {
      method: req.method,
      url: req.url,
      query: req.query,
      params: req.params,
      header: req.headers["x-test"],
      body: await readJson(req)
    }
  }))
  route(app, "get", "/text", async () => ({ status: 201, headers: { "x-extra": "1" }, text: "plain" }))
  route(app, "del", "/nothing", async () => ({ status: 204 }))
  route(app, "get", "/missing", async () => jsonError(404, "not_found", "No such thing", "model_tier_not_found"))
  route(
    app,
    "post",
    "/small",
    async (req) => {
      handlerCalls++
      return { status: 200, json: { size: (await req.body()).length } }
    },
    { maxBodyBytes: 1024 }
  )
  route(app, "post", "/json", async (req) => {
    try {
      return { status: 200, json: await readJson(req) }
    } catch (error) {
      if (error instanceof MalformedJson) return jsonError(400, "bad_request", error.message)
      throw error
    }
  })
  route(app, "any", "/throw", async () => {
    throw new Error("boom")
  })
  route(app, "post", "/slow", async (req: HttpRequest) => {
    try {
      await req.body()
      return { status: 200, text: "unexpected" }
    } catch (error) {
      lastAborted = { error, signalAborted: req.signal.aborted }
      abortSeen()
      throw error
    }
  })
  served = await serve(app)
  ;({ port, base } = served)
})

afterAll(() => {
  served.close()
})

describe("route", () => {
  it("round-trips JSON with path params, query and headers", async () => {
    const response = await fetch(`${base}/echo/org-1/ws%202?x=1&y=2`, {
      method: "POST",
      headers: { "content-type": "application/json", "X-Test": "Visible" },
      body: JSON.stringify({ hello: ["world", 1] })
    })
    expect(response.status).toBe(200)
    expect(response.statusText).toBe("OK")
    expect(response.headers.get("content-type")).toBe("application/json")
    expect(await response.json()).toEqual({
      method: "POST",
      url: "/echo/org-1/ws%202",
      query: "x=1&y=2",
      params: ["org-1", "ws%202"],
      header: "Visible",
      body: { hello: ["world", 1] }
    })
  })

  it("writes text replies with their status line and headers", async () => {
    const response = await fetch(`${base}/text`)
    expect([response.status, response.statusText]).toEqual([201, "Created"])
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8")
    expect(response.headers.get("x-extra")).toBe("1")
    expect(await response.text()).toBe("plain")
  })

  it("answers 204 without a body or content-length, and the connection serves the next request", async () => {
    const [first, second] = await rawSequence([
      ["DELETE /nothing HTTP/1.1\r\nHost: x\r\n\r\n", /\r\n\r\n$/],
      ["GET /text HTTP/1.1\r\nHost: x\r\n\r\n", /plain$/]
    ])
    expect(first.startsWith("HTTP/1.1 204 No Content\r\n")).toBe(true)
    expect(first.toLowerCase()).not.toContain("content-length")
    expect(second.startsWith("HTTP/1.1 201 Created\r\n")).toBe(true)
  })

  it("shapes errors as { error: { code, reason?, message } }", async () => {
    const response = await fetch(`${base}/missing`)
    expect([response.status, response.statusText]).toEqual([404, "Not Found"])
    expect(await response.json()).toEqual({
      error: { code: "not_found", reason: "model_tier_not_found", message: "No such thing" }
    })
    expect(jsonError(400, "bad_request", "Bad").json).toEqual({ error: { code: "bad_request", message: "Bad" } })
  })

  it("answers 413 at once when content-length is over the limit", async () => {
    const before = handlerCalls
    const response = await fetch(`${base}/small`, { method: "POST", body: Buffer.alloc(5000, 97) })
    expect([response.status, response.statusText]).toEqual([413, "Payload Too Large"])
    // The rest of the body is not worth reading: the connection closes.
    expect(response.headers.get("connection")).toBe("close")
    expect(await response.json()).toEqual({
      error: { code: "payload_too_large", message: "Request body exceeds 1024 bytes" }
    })
    expect(handlerCalls).toBe(before)
  })

  it("answers 413 when a chunked body grows over the limit", async () => {
    const chunk = "a".repeat(400)
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new TextEncoder().encode(chunk))
        controller.close()
      }
    })
    const response = await fetch(`${base}/small`, { method: "POST", body, duplex: "half" } as RequestInit)
    expect(response.status).toBe(413)
    expect(await response.json()).toMatchObject({ error: { code: "payload_too_large" } })
  })

  it("accepts a chunked body under the limit", async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(300))
        controller.enqueue(new Uint8Array(300))
        controller.close()
      }
    })
    const response = await fetch(`${base}/small`, { method: "POST", body, duplex: "half" } as RequestInit)
    expect(await response.json()).toEqual({ size: 600 })
  })

  it("reassembles a body that arrives in many pieces", async () => {
    const value = { items: Array.from({ length: 20_000 }, (_, i) => `item-${i}`) }
    const response = await fetch(`${base}/json`, { method: "POST", body: JSON.stringify(value) })
    expect(await response.json()).toEqual(value)
  })

  it("makes readJson throw MalformedJson on an empty or malformed body", async () => {
    for (const body of [undefined, "", "{not json", "   "]) {
      const response = await fetch(`${base}/json`, { method: "POST", body })
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({ error: { code: "bad_request" } })
    }
    const malformed = readJson({ body: async () => Buffer.from("{") } as unknown as HttpRequest)
    await expect(malformed).rejects.toBeInstanceOf(MalformedJson)
    await expect(malformed).rejects.toMatchObject({ _tag: "MalformedJson" })
  })

  it("turns a handler exception into a 500 with the JSON error shape and logs it once", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {})
    try {
      const response = await fetch(`${base}/throw`, { method: "DELETE" })
      expect(response.status).toBe(500)
      expect(await response.json()).toEqual({ error: { code: "internal", message: "Internal error" } })
      expect(log).toHaveBeenCalledTimes(1)
      expect(String(log.mock.calls[0][0])).toContain("DELETE /throw")
    } finally {
      log.mockRestore()
    }
  })

  it("survives a client that aborts mid-body and keeps serving", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {})
    try {
      const seen = new Promise<void>((resolve) => (abortSeen = resolve))
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.write("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789")
        setTimeout(() => socket.destroy(), 50)
      })
      await seen
      expect(lastAborted?.error).toBeInstanceOf(RequestAborted)
      expect(lastAborted?.signalAborted).toBe(true)
      // The handler rethrew a body failure nobody can be answered about: not logged as a bug.
      expect(log).not.toHaveBeenCalled()
    } finally {
      log.mockRestore()
    }
    const response = await fetch(`${base}/echo/a/b`, { method: "POST", body: "{}" })
    expect(response.status).toBe(200)
  })
})
