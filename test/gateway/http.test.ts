import net from "node:net"
import uWS from "uWebSockets.js"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { makeCors } from "../../gateway/cors.ts"
import {
  type HttpRequest,
  jsonError,
  MalformedJson,
  observeRequests,
  readJson,
  RequestAborted,
  route,
  serveCors,
  Streaming
} from "../../gateway/http.ts"
import { openSse } from "../../gateway/sse.ts"
import { makeNodeLog } from "../../src/platform/Logging.ts"
import { type Served, serve } from "../support/uws.ts"

let served: Served
let base: string
let port: number
let handlerCalls = 0
let lastAborted: { error: unknown; signalAborted: boolean } | undefined
let abortSeen: () => void = () => {}
/** The lines the routes' log wrote since the test began. */
let lines: Array<Record<string, any>> = []
const requestLines = () => lines.filter((line) => line.message === "request")
/** A request's line is written as its answer is: a moment after the client may have read it. */
const lineOf = async (requestId: string | null) => {
  for (let i = 0; i < 50; i++) {
    const line = lines.find((l) => l.requestId === requestId)
    if (line !== undefined) return line
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`no line for request ${requestId}`)
}

beforeEach(() => {
  lines = []
})

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
  observeRequests(app, { log: makeNodeLog({ level: "info", format: "json", sink: (line) => lines.push(JSON.parse(line)) }) })
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
    expect(await response.json()).toEqual({
      error: { code: "payload_too_large", message: "Request body exceeds 1024 bytes" }
    })
    expect(handlerCalls).toBe(before)
  })

  it("after a 413, reads the rest of the body the client is still writing, and the connection serves its next request", async () => {
    const [tooLarge, next] = await rawSequence([
      ["POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n", /\}\}$/],
      [`${"a".repeat(5000)}GET /text HTTP/1.1\r\nHost: x\r\n\r\n`, /plain$/]
    ])
    expect(tooLarge.startsWith("HTTP/1.1 413 Payload Too Large\r\n")).toBe(true)
    expect(tooLarge.toLowerCase()).not.toContain("connection: close")
    expect(next.startsWith("HTTP/1.1 201 Created\r\n")).toBe(true)
  })

  it("closes the connection after a 413 for a body declared far beyond the limit: its rest is not worth reading", async () => {
    const [tooLarge] = await rawSequence([["POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n", /\}\}$/]])
    expect(tooLarge.startsWith("HTTP/1.1 413 Payload Too Large\r\n")).toBe(true)
    expect(tooLarge.toLowerCase()).toContain("connection: close")
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

  it("turns a handler exception into a 500 with the JSON error shape, its line at error level naming the exception", async () => {
    const response = await fetch(`${base}/throw`, { method: "DELETE" })
    expect(response.status).toBe(500)
    expect(await response.json()).toEqual({ error: { code: "internal", message: "Internal error" } })
    const line = await lineOf(response.headers.get("x-request-id"))
    expect(line).toMatchObject({ level: "error", method: "DELETE", route: "/throw", status: 500, error: { tag: "Error", message: "boom" } })
    expect(line.error.stack).toContain("boom")
    expect(requestLines()).toHaveLength(1)
  })

  it("survives a client that aborts mid-body and keeps serving", async () => {
    const seen = new Promise<void>((resolve) => (abortSeen = resolve))
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.write("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789")
      setTimeout(() => socket.destroy(), 50)
    })
    await seen
    expect(lastAborted?.error).toBeInstanceOf(RequestAborted)
    expect(lastAborted?.signalAborted).toBe(true)
    // The handler rethrew a body failure nobody can be answered about: logged as the client's leaving, not as a bug.
    expect(requestLines().map(({ level, route, status, error }) => ({ level, route, status, error }))).toEqual([
      { level: "info", route: "/slow", status: 499, error: undefined }
    ])
    const response = await fetch(`${base}/echo/a/b`, { method: "POST", body: "{}" })
    expect(response.status).toBe(200)
  })
})

describe("request lines and ids", () => {
  it("answer every request with an id, one line each naming it, the route pattern (never the URL or query), status, duration and bytes", async () => {
    const response = await fetch(`${base}/echo/org-1/secret-ws?token=abc`, { method: "POST", body: "{}" })
    const requestId = response.headers.get("x-request-id")
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
    const body = await response.text()
    const line = await lineOf(requestId)
    expect(line).toEqual({
      time: expect.any(String),
      level: "info",
      message: "request",
      requestId,
      method: "POST",
      route: "/echo/:a/:b",
      status: 200,
      durationMs: expect.any(Number),
      bytes: Buffer.byteLength(body)
    })
    expect(JSON.stringify(lines)).not.toContain("secret-ws")
    expect(JSON.stringify(lines)).not.toContain("abc")
  })

  it("keep a client's X-Request-Id when it is a plain token, and replace one that is not", async () => {
    const kept = await fetch(`${base}/text`, { headers: { "x-request-id": "edge-7f3a:42" } })
    expect(kept.headers.get("x-request-id")).toBe("edge-7f3a:42")
    await lineOf("edge-7f3a:42")
    for (const sent of ["two words", "x".repeat(129), "quote\"d"]) {
      const replaced = await fetch(`${base}/text`, { headers: { "x-request-id": sent } })
      expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    }
  })

  it("carry the id on an answer the layer writes itself (413), and log it", async () => {
    const response = await fetch(`${base}/small`, { method: "POST", headers: { "x-request-id": "big-1" }, body: "x".repeat(2048) })
    expect(response.status).toBe(413)
    expect(response.headers.get("x-request-id")).toBe("big-1")
    expect(await lineOf("big-1")).toMatchObject({ route: "/small", status: 413, level: "info" })
  })
})

describe("serveCors", () => {
  const ALLOWED = "https://app.example"
  let corsServed: Served
  let corsBase: string
  let bearerCalls = 0

  beforeAll(async () => {
    const app = uWS.App()
    serveCors(
      app,
      makeCors({
        origins: [ALLOWED, "*"],
        routes: [
          { path: "/bearer", methods: ["POST"], requestHeaders: ["Authorization", "Content-Type"], public: false },
          { path: "/stream", methods: ["GET"], requestHeaders: ["Last-Event-ID"], public: false },
          { path: "/public/", methods: ["GET"], requestHeaders: [], public: true }
        ],
        exposedHeaders: ["WWW-Authenticate", "Retry-After"],
        maxAgeSeconds: 600
      })
    )
    route(
      app,
      "post",
      "/bearer",
      async (req) => {
        bearerCalls++
        await req.body()
        return { ...jsonError(401, "unauthorized", "no key", "missing_credential"), headers: { "www-authenticate": "Bearer" } }
      },
      { maxBodyBytes: 64 }
    )
    route(app, "get", "/stream", async (_req, res) => {
      const sse = openSse(res)
      sse.data({ n: 1 })
      sse.end()
      return Streaming
    })
    route(app, "get", "/public/doc", async () => ({ status: 200, json: { public: true } }))
    // a cookie route: no policy
    route(app, "post", "/session", async () => ({ status: 200, headers: { "set-cookie": "s=1; HttpOnly" }, json: { signedIn: true } }))
    route(app, "any", "/*", async (req) => jsonError(404, "not_found", `no route ${req.method} ${req.url}`, "route_not_found"))
    corsServed = await serve(app)
    corsBase = corsServed.base
  })

  afterAll(() => {
    corsServed.close()
  })

  const preflight = (path: string, origin: string, headers = "authorization,content-type") =>
    fetch(`${corsBase}${path}`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": headers }
    })

  const corsHeadersOf = (response: Response) =>
    Object.fromEntries([...response.headers].filter(([name]) => name.startsWith("access-control-") || name === "vary"))

  it("answers a preflight from an allowed origin 204 with that origin, the route's methods and headers, and a max age", async () => {
    const response = await preflight("/bearer", ALLOWED)
    expect(response.status).toBe(204)
    expect(corsHeadersOf(response)).toEqual({
      "access-control-allow-origin": ALLOWED,
      vary: "Origin",
      "access-control-allow-methods": "POST",
      "access-control-allow-headers": "Authorization, Content-Type",
      "access-control-max-age": "600"
    })
    expect(await response.text()).toBe("")
  })

  it("refuses a preflight from another origin, or on a route without a policy, 403 without CORS headers", async () => {
    for (const [path, origin] of [
      ["/bearer", "https://evil.example"],
      ["/bearer", "null"],
      // `*` opens public routes only
      ["/stream", "https://evil.example"],
      // a cookie route allows no foreign origin, a listed one neither
      ["/session", ALLOWED],
      ["/nowhere", ALLOWED]
    ]) {
      const response = await preflight(path, origin)
      expect(response.status, `${path} from ${origin}`).toBe(403)
      expect(corsHeadersOf(response)).toEqual({})
      expect(await response.json()).toMatchObject({ error: { code: "forbidden", reason: "origin_not_allowed" } })
    }
  })

  it("leaves an OPTIONS that is no preflight to the routes", async () => {
    const response = await fetch(`${corsBase}/bearer`, { method: "OPTIONS" })
    expect(response.status).toBe(404)
    expect(await response.json()).toMatchObject({ error: { reason: "route_not_found" } })
  })

  it("lets an allowed origin read a response, a 401's WWW-Authenticate included, and never allows credentials", async () => {
    const response = await fetch(`${corsBase}/bearer`, { method: "POST", headers: { origin: ALLOWED }, body: "{}" })
    expect(response.status).toBe(401)
    expect(response.headers.get("www-authenticate")).toBe("Bearer")
    expect(corsHeadersOf(response)).toEqual({
      "access-control-allow-origin": ALLOWED,
      vary: "Origin",
      "access-control-expose-headers": "WWW-Authenticate, Retry-After"
    })
  })

  it("carries the CORS headers on an answer the layer writes itself (413) and on an SSE stream", async () => {
    const tooLarge = await fetch(`${corsBase}/bearer`, { method: "POST", headers: { origin: ALLOWED }, body: "x".repeat(100) })
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.headers.get("access-control-allow-origin")).toBe(ALLOWED)

    const stream = await fetch(`${corsBase}/stream`, { headers: { origin: ALLOWED } })
    expect(stream.headers.get("content-type")).toBe("text/event-stream")
    expect(corsHeadersOf(stream)).toEqual({
      "access-control-allow-origin": ALLOWED,
      vary: "Origin",
      "access-control-expose-headers": "WWW-Authenticate, Retry-After"
    })
    expect(await stream.text()).toBe('data: {"n":1}\n\n')
  })

  it("refuses a request from another origin 403 before its handler runs; one without an Origin is served", async () => {
    const before = bearerCalls
    const refused = await fetch(`${corsBase}/bearer`, { method: "POST", headers: { origin: "https://evil.example" }, body: "{}" })
    expect(refused.status).toBe(403)
    expect(corsHeadersOf(refused)).toEqual({})
    expect(await refused.json()).toMatchObject({ error: { code: "forbidden", reason: "origin_not_allowed" } })
    expect(bearerCalls).toBe(before)

    const server = await fetch(`${corsBase}/bearer`, { method: "POST", body: "{}" })
    expect(server.status).toBe(401)
    // the answer depends on the Origin: a cache must not hand one origin's answer to another
    expect(corsHeadersOf(server)).toEqual({ vary: "Origin" })
    expect(bearerCalls).toBe(before + 1)
  })

  it("opens a public route to any origin with `*` when the origins include it", async () => {
    for (const origin of ["https://anyone.example", ALLOWED]) {
      const response = await fetch(`${corsBase}/public/doc`, { headers: { origin } })
      expect(response.status).toBe(200)
      expect(corsHeadersOf(response)).toEqual({ "access-control-allow-origin": "*", "access-control-expose-headers": "WWW-Authenticate, Retry-After" })
    }
    const response = await fetch(`${corsBase}/public/doc`, {
      method: "OPTIONS",
      headers: { origin: "https://anyone.example", "access-control-request-method": "GET" }
    })
    expect(response.status).toBe(204)
    expect(corsHeadersOf(response)).toEqual({ "access-control-allow-origin": "*", "access-control-allow-methods": "GET", "access-control-max-age": "600" })
  })

  it("adds nothing to a route without a policy, and refuses a write from any other site, a listed origin included", async () => {
    const own = await fetch(`${corsBase}/session`, { method: "POST", headers: { origin: corsBase }, body: "{}" })
    expect(own.status).toBe(200)
    expect(own.headers.get("set-cookie")).toBe("s=1; HttpOnly")
    expect(corsHeadersOf(own)).toEqual({})
    for (const headers of [{ origin: ALLOWED }, { origin: "null" }, { "sec-fetch-site": "cross-site" }] as ReadonlyArray<Record<string, string>>) {
      const refused = await fetch(`${corsBase}/session`, { method: "POST", headers, body: "{}" })
      expect(refused.status).toBe(403)
      expect(refused.headers.get("set-cookie")).toBeNull()
      expect(corsHeadersOf(refused)).toEqual({})
      expect(((await refused.json()) as any).error).toMatchObject({ code: "forbidden", reason: "cross_site_request" })
    }
  })
})
