import net from "node:net"
import { setTimeout as sleep } from "node:timers/promises"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import uWS from "uWebSockets.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { observeRequests, route, Streaming } from "../../gateway/http.ts"
import { openSse, type SseCloseReason, type SseWriter } from "../../gateway/sse.ts"
import { makeNodeLog } from "../../src/platform/Logging.ts"
import { type Served, serve } from "../support/uws.ts"

const FLOOD_EVENTS = 50_000
const PAD = "x".repeat(1000)

let served: Served
let port: number
let base: string

/** Server-side handles the tests wait on. */
let flood: SseWriter | undefined
let floodWritten: () => void = () => {}
let big: SseWriter | undefined
let bigWritten: () => void = () => {}
const BIG = "y".repeat(8_000_000)
let disconnected: { writer: SseWriter; reason: Promise<SseCloseReason> } | undefined
let lateOpen: Promise<{ closed: boolean; reason: SseCloseReason | undefined }> | undefined
const lines: Array<Record<string, any>> = []

const readSse = async (path: string) => {
  const response = await fetch(`${base}${path}`)
  const events: Array<EventSourceMessage> = []
  const comments: Array<string> = []
  const parser = createParser({ onEvent: (event) => events.push(event), onComment: (text) => comments.push(text) })
  const decoder = new TextDecoder()
  for await (const chunk of response.body!) parser.feed(decoder.decode(chunk, { stream: true }))
  return { response, events, comments }
}

/** Decodes a raw HTTP/1.1 response with a chunked body. */
const decodeChunked = (raw: Buffer): { head: string; body: string } => {
  const headEnd = raw.indexOf("\r\n\r\n")
  const parts: Array<Buffer> = []
  let at = headEnd + 4
  for (;;) {
    const lineEnd = raw.indexOf("\r\n", at)
    const size = parseInt(raw.subarray(at, lineEnd).toString("latin1"), 16)
    if (size === 0) break
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
  return { head: raw.subarray(0, headEnd).toString("latin1"), body: Buffer.concat(parts).toString("utf8") }
}

beforeAll(async () => {
  const app = uWS.App()
  observeRequests(app, { log: makeNodeLog({ level: "info", format: "json", sink: (line) => lines.push(JSON.parse(line)) }) })
  route(app, "post", "/events", async (req, res) => {
    await req.body()
    const sse = openSse(res, { headers: { "x-stream": "1" } })
    sse.data({ type: "run", n: 1 })
    sse.comment("between")
    sse.data({ type: "text", delta: "é\n✓" })
    sse.event("note", "line one\nline two")
    sse.data({ type: "usage", tokens: 3 })
    sse.event("done", JSON.stringify({ ok: true }))
    sse.end()
    sse.data({ type: "after end" })
    return Streaming
  })
  route(app, "get", "/quiet", async (_req, res) => {
    const sse = openSse(res, { keepAliveMs: 100 })
    setTimeout(() => {
      sse.event("done", "[DONE]")
      sse.end()
    }, 450)
    return Streaming
  })
  route(app, "get", "/busy", async (_req, res) => {
    const sse = openSse(res, { keepAliveMs: 100 })
    let n = 0
    const timer = setInterval(() => {
      sse.data({ n: n++ })
      if (n === 30) {
        clearInterval(timer)
        sse.event("done", "[DONE]")
        sse.end()
      }
    }, 20)
    return Streaming
  })
  route(app, "get", "/flood", async (_req, res) => {
    const sse = openSse(res)
    flood = sse
    for (let i = 0; i < FLOOD_EVENTS; i++) sse.data({ i, pad: PAD })
    sse.event("done", "[DONE]")
    sse.end()
    floodWritten()
    return Streaming
  })
  route(app, "get", "/big", async (_req, res) => {
    const sse = openSse(res)
    big = sse
    sse.data({ big: BIG })
    bigWritten()
    return Streaming
  })
  route(app, "get", "/disconnect", async (_req, res) => {
    const writer = openSse(res, { keepAliveMs: 50 })
    disconnected = { writer, reason: new Promise((resolve) => writer.onClose(resolve)) }
    writer.data({ type: "run" })
    return Streaming
  })
  route(app, "get", "/late", async (_req, res) => {
    lateOpen = (async () => {
      await sleep(200)
      const writer = openSse(res)
      let reason: SseCloseReason | undefined
      writer.onClose((r) => (reason = r))
      writer.data({ dropped: true })
      return { closed: writer.closed, reason }
    })()
    return Streaming
  })
  served = await serve(app)
  ;({ port, base } = served)
})

afterAll(() => {
  served.close()
})

describe("openSse", () => {
  it("sends the stream headers of the spec", async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1", () =>
        socket.write("POST /events HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
      )
      let text = ""
      socket.setEncoding("utf8")
      socket.on("data", (chunk: string) => {
        text += chunk
        if (text.includes("\r\n0\r\n\r\n")) {
          socket.destroy()
          resolve(text)
        }
      })
      socket.on("error", reject)
    })
    const head = raw.slice(0, raw.indexOf("\r\n\r\n")).split("\r\n")
    expect(head[0]).toBe("HTTP/1.1 200 OK")
    const headers = head.slice(1).map((line) => line.toLowerCase())
    expect(headers).toContain("content-type: text/event-stream")
    expect(headers).toContain("cache-control: no-cache")
    expect(headers).toContain("connection: keep-alive")
    expect(headers).toContain("x-stream: 1")
    expect(headers.filter((line) => line.startsWith("content-type:"))).toHaveLength(1)
  })

  it("writes data and named events in order, ending with event: done", async () => {
    const response = await fetch(`${base}/events`, { method: "POST", body: "{}" })
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    expect(response.headers.get("cache-control")).toBe("no-cache")
    const events: Array<EventSourceMessage> = []
    const comments: Array<string> = []
    const parser = createParser({ onEvent: (event) => events.push(event), onComment: (text) => comments.push(text) })
    parser.feed(await response.text())
    expect(events.map((event) => [event.event, event.data])).toEqual([
      [undefined, JSON.stringify({ type: "run", n: 1 })],
      [undefined, JSON.stringify({ type: "text", delta: "é\n✓" })],
      ["note", "line one\nline two"],
      [undefined, JSON.stringify({ type: "usage", tokens: 3 })],
      ["done", JSON.stringify({ ok: true })]
    ])
    expect(comments).toEqual(["between"])
  })

  it("logs a stream's request once, as it closes: its id, how it ended, the bytes it sent, its whole life", async () => {
    const response = await fetch(`${base}/events`, { method: "POST", body: "{}" })
    const requestId = response.headers.get("x-request-id")
    const body = await response.text()
    const line = lines.find((l) => l.requestId === requestId)
    expect(line).toMatchObject({ level: "info", message: "request", method: "POST", route: "/events", status: 200, stream: "ended", bytes: Buffer.byteLength(body) })
    expect(lines.filter((l) => l.requestId === requestId)).toHaveLength(1)
  })

  it("sends a keep-alive comment while quiet", async () => {
    const { events, comments } = await readSse("/quiet")
    expect(comments.length).toBeGreaterThanOrEqual(2)
    expect(new Set(comments)).toEqual(new Set(["keep-alive"]))
    expect(events.map((event) => [event.event, event.data])).toEqual([["done", "[DONE]"]])
  })

  it("sends no keep-alive while events flow faster than the interval", async () => {
    const { events, comments } = await readSse("/busy")
    expect(events).toHaveLength(31)
    expect(comments).toEqual([])
  })

  it("queues under backpressure and delivers everything in order once the client reads", async () => {
    const written = new Promise<void>((resolve) => (floodWritten = resolve))
    const received: Array<Buffer> = []
    let finish: () => void = () => {}
    const complete = new Promise<void>((resolve) => (finish = resolve))
    const socket = net.connect(port, "127.0.0.1", () => socket.write("GET /flood HTTP/1.1\r\nHost: x\r\n\r\n"))
    socket.on("data", (chunk: Buffer) => {
      received.push(chunk)
      const tail = Buffer.concat(received.slice(-2)).subarray(-7).toString("latin1")
      if (tail.endsWith("\r\n0\r\n\r\n")) finish()
    })
    // A paused socket stops reading from the kernel: the server's writes back up.
    socket.pause()
    await written
    const writer = flood!
    expect(writer.backpressureEvents).toBeGreaterThan(0)
    expect(writer.closed).toBe(true)
    let drained = false
    const drainedPromise = writer.drained().then(() => (drained = true))
    await sleep(200)
    expect(drained).toBe(false)

    socket.resume()
    await complete
    await drainedPromise
    socket.destroy()

    const { body } = decodeChunked(Buffer.concat(received))
    expect(body.length).toBeGreaterThan(50_000_000)
    const events: Array<EventSourceMessage> = []
    const parser = createParser({ onEvent: (event) => events.push(event) })
    parser.feed(body)
    expect(events).toHaveLength(FLOOD_EVENTS + 1)
    for (let i = 0; i < FLOOD_EVENTS; i++) {
      const event = JSON.parse(events[i].data)
      if (event.i !== i || event.pad !== PAD) throw new Error(`event ${i} is ${events[i].data.slice(0, 40)}`)
    }
    expect(events[FLOOD_EVENTS]).toMatchObject({ event: "done", data: "[DONE]" })
  })

  it("flushes what uWS buffered even when nothing more is written", async () => {
    const written = new Promise<void>((resolve) => (bigWritten = resolve))
    let received = 0
    let tail = ""
    let finish: () => void = () => {}
    const complete = new Promise<void>((resolve) => (finish = resolve))
    const socket = net.connect(port, "127.0.0.1", () => socket.write("GET /big HTTP/1.1\r\nHost: x\r\n\r\n"))
    socket.on("data", (chunk: Buffer) => {
      received += chunk.length
      tail = (tail + chunk.toString("latin1")).slice(-16)
      if (tail.endsWith('"}\n\n')) finish()
    })
    socket.pause()
    await written
    const writer = big!
    expect(writer.backpressureEvents).toBe(1)
    socket.resume()
    // The stream stays open: the event must arrive without a later write or end() pushing it out.
    await complete
    await writer.drained()
    expect(received).toBeGreaterThan(BIG.length)
    writer.end()
    socket.destroy()
  })

  it("reports a client disconnect through onClose and drops later writes", async () => {
    const controller = new AbortController()
    const response = await fetch(`${base}/disconnect`, { signal: controller.signal })
    const reader = response.body!.getReader()
    const first = await reader.read()
    expect(new TextDecoder().decode(first.value)).toContain('data: {"type":"run"}')
    controller.abort()
    const { writer, reason } = disconnected!
    expect(await reason).toBe("aborted")
    expect(lines.find((l) => l.requestId === response.headers.get("x-request-id"))).toMatchObject({ route: "/disconnect", status: 200, stream: "aborted" })
    expect(writer.closed).toBe(true)
    expect(() => {
      writer.data({ type: "text", delta: "nobody listens" })
      writer.event("done", "[DONE]")
      writer.end()
    }).not.toThrow()
    await writer.drained()
    const again = await fetch(`${base}/events`, { method: "POST", body: "{}" })
    expect(again.status).toBe(200)
    await again.text()
  })

  it("opens closed when the client left before the stream opened", async () => {
    const controller = new AbortController()
    const request = fetch(`${base}/late`, { signal: controller.signal }).catch(() => undefined)
    await sleep(50)
    controller.abort()
    await request
    expect(await lateOpen).toEqual({ closed: true, reason: "aborted" })
  })
})
