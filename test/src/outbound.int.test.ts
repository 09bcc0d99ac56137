/**
 * The outbound guard's fetch (`checkedFetch`), which the model providers, OpenID Connect and the
 * MCP client are given, against real servers on this machine's loopback.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { checkedFetch, makePolicy, OutboundRefused, parseOutboundAllow } from "../../src/platform/Outbound.ts"

const listen = async (host: string, handle: (request: IncomingMessage, response: ServerResponse) => void) => {
  const server = createServer(handle)
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  return { server, url: `http://${host}:${(server.address() as AddressInfo).port}` }
}

let origin: { server: Server; url: string }
let elsewhere: { server: Server; url: string }
const received: Array<{ readonly at: string; readonly path: string; readonly headers: IncomingMessage["headers"]; readonly body: string }> = []

beforeAll(async () => {
  const record = (at: string) => (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      received.push({ at, path: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks).toString("utf8") })
      if (request.url === "/redirect") return response.writeHead(302, { location: `${elsewhere.url}/inside` }).end()
      if (request.url === "/stream") {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.write("data: one\n\n")
        // the rest comes only once the first part was read: the answer streams
        return setTimeout(() => response.end("data: two\n\n"), 100)
      }
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }))
    })
  }
  origin = await listen("127.0.0.1", record("origin"))
  // another loopback address, not on the allow-list below
  elsewhere = await listen("127.0.0.2", record("elsewhere"))
})

afterAll(async () => {
  await Promise.all([origin, elsewhere].map(({ server }) => new Promise<void>((resolve) => server.close(() => resolve()))))
})

describe("the checked fetch", () => {
  const allowOrigin = checkedFetch(makePolicy(parseOutboundAllow("127.0.0.1")))

  it("refuses a loopback address the operator did not allow, before connecting: it rejects with the guard's refusal", async () => {
    const before = received.length
    const error = await checkedFetch(makePolicy([]))(`${origin.url}/v1/chat/completions`, { method: "POST", body: "{}" }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OutboundRefused)
    expect(error).toMatchObject({ reason: "loopback", address: "127.0.0.1" })
    expect(received.length).toBe(before)
  })

  it("sends an allowed request with its method, headers and body, framed by the transport", async () => {
    const response = await allowOrigin(`${origin.url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer sk-x", "content-type": "application/json" }, body: JSON.stringify({ a: "ü" }) })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ ok: true })
    const request = received.at(-1)!
    expect(request).toMatchObject({ at: "origin", path: "/v1/chat/completions", body: JSON.stringify({ a: "ü" }) })
    expect(request.headers).toMatchObject({ authorization: "Bearer sk-x", "content-length": String(Buffer.byteLength(JSON.stringify({ a: "ü" }))) })
  })

  it("streams the answer: its first part is read before the server has written the rest", async () => {
    const response = await allowOrigin(`${origin.url}/stream`)
    const reader = response.body!.getReader()
    const first = await reader.read()
    expect(new TextDecoder().decode(first.value)).toBe("data: one\n\n")
    let rest = ""
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += new TextDecoder().decode(part.value)
    expect(rest).toBe("data: two\n\n")
  })

  it("does not follow a redirect: the 3xx is the answer, and the address it names is not called", async () => {
    const response = await allowOrigin(`${origin.url}/redirect`)
    expect(response.status).toBe(302)
    expect(response.headers.get("location")).toBe(`${elsewhere.url}/inside`)
    expect(received.some(({ at }) => at === "elsewhere")).toBe(false)
  })
})
