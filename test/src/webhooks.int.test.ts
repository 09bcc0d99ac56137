/**
 * Signed webhooks against a real receiver on 127.0.0.1. Every request stays on this machine's
 * loopback: other refused ranges are checked on the address table (outbound.unit.test.ts).
 */
import { Effect, Either } from "effect"
import { createHmac } from "node:crypto"
import { lookup } from "node:dns/promises"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { hostname } from "node:os"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makePolicy, OutboundPolicy, parseOutboundAllow, refusedRange, type Resolver, systemResolver } from "../../src/platform/Outbound.ts"
import { newWebhookSecret, sendWebhook, signWebhook, verifyWebhook, type WebhookDelivery } from "../../src/automations/Webhooks.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhookReceiver.ts"

const send = (delivery: WebhookDelivery, options: { readonly allow?: string; readonly resolve?: Resolver } = {}) =>
  Effect.runPromise(
    sendWebhook(delivery).pipe(Effect.provideService(OutboundPolicy, makePolicy(parseOutboundAllow(options.allow ?? "127.0.0.1"), options.resolve ?? systemResolver)), Effect.either)
  )

const nowSeconds = () => Math.floor(Date.now() / 1000)

const oversized = "x".repeat(1024 * 1024)
/** JSON nested past MAX_JSON_DEPTH: kept as the step's output, read back with it. */
const deepJson = `${"[".repeat(5_000)}${"]".repeat(5_000)}`
let failuresLeft = 0

let receiver: WebhookReceiver
beforeAll(async () => {
  receiver = await startWebhookReceiver({
    "/flaky": (_, response) => {
      if (failuresLeft-- > 0) response.writeHead(503).end("busy")
      else response.writeHead(204).end()
    },
    "/text": (_, response) => response.writeHead(200, { "content-type": "text/plain" }).end("thanks"),
    "/silent": () => {},
    "/json": (_, response) => response.writeHead(200, { "content-type": "application/json" }).end(`{"ok":[1]}`),
    "/deep-json": (_, response) => response.writeHead(200, { "content-type": "application/json" }).end(deepJson),
    "/huge-chunked": (_, response) => response.writeHead(200, { "content-type": "text/plain" }).end(oversized),
    "/huge-declared": (_, response) => response.writeHead(200, { "content-type": "text/plain", "content-length": String(oversized.length) }).end(oversized),
    "/redirect": (_, response) => response.writeHead(302, { location: "/elsewhere" }).end()
  })
})
afterAll(() => receiver.close())

const secret = newWebhookSecret()
const event = { type: "run.completed", runId: "run_1", output: { ok: true, note: "ünïcode ✓" } }

describe("a signed webhook", () => {
  it("arrives with Standard Webhooks headers the receiver can verify", async () => {
    const result = await send({ url: `${receiver.url}/hook`, body: event, webhookId: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", secret })
    expect(Either.getOrThrow(result)).toEqual({ status: 200, body: { received: true } })

    const delivery = receiver.deliveries.at(-1)!
    expect(delivery.method).toBe("POST")
    expect(delivery.headers["content-type"]).toBe("application/json")
    expect(JSON.parse(delivery.body)).toEqual(event)
    expect(delivery.headers["webhook-id"]).toBe("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W")
    expect(Math.abs(Number(delivery.headers["webhook-timestamp"]) - nowSeconds())).toBeLessThanOrEqual(5)

    expect(verifyWebhook({ headers: delivery.headers, body: delivery.body, secret, nowSeconds: nowSeconds() })).toMatchObject({ valid: true, id: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W" })
    // recomputed from the convention itself, not through signWebhook
    const key = Buffer.from(secret.slice("whsec_".length), "base64")
    const content = `${delivery.headers["webhook-id"]}.${delivery.headers["webhook-timestamp"]}.${delivery.body}`
    expect(delivery.headers["webhook-signature"]).toBe(`v1,${createHmac("sha256", key).update(content).digest("base64")}`)
  })

  it("is refused by a receiver with another secret, a changed body or an old timestamp", async () => {
    await send({ url: `${receiver.url}/hook`, body: event, webhookId: "msg_verify", secret })
    const { headers, body } = receiver.deliveries.at(-1)!
    expect(verifyWebhook({ headers, body, secret: newWebhookSecret(), nowSeconds: nowSeconds() })).toEqual({ valid: false, reason: "bad_signature" })
    expect(verifyWebhook({ headers, body: body.replace("run_1", "run_2"), secret, nowSeconds: nowSeconds() })).toEqual({ valid: false, reason: "bad_signature" })
    expect(verifyWebhook({ headers, body, secret, nowSeconds: nowSeconds() + 3600 })).toEqual({ valid: false, reason: "timestamp_out_of_tolerance" })
    expect(verifyWebhook({ headers: { ...headers, "webhook-signature": undefined }, body, secret, nowSeconds: nowSeconds() })).toEqual({ valid: false, reason: "missing_headers" })
  })

  it("matches the convention's published example", () => {
    // the example of the Standard Webhooks reference libraries
    const signed = signWebhook({
      id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
      timestamp: 1614265330,
      body: '{"test": 2432232314}',
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    })
    expect(signed).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
  })

  it("keeps its webhook-id on a retry, with a fresh signature", async () => {
    failuresLeft = 1
    const delivery = { url: `${receiver.url}/flaky`, body: event, webhookId: "msg_retry_1", secret }
    const first = await send(delivery)
    expect(Either.isLeft(first) && first.left).toMatchObject({ _tag: "WebhookRejected", status: 503, body: "busy" })
    const second = await send(delivery)
    expect(Either.getOrThrow(second)).toEqual({ status: 204, body: "" })

    const attempts = receiver.deliveries.filter(({ path }) => path === "/flaky")
    expect(attempts.map(({ headers }) => headers["webhook-id"])).toEqual(["msg_retry_1", "msg_retry_1"])
    for (const { headers, body } of attempts) expect(verifyWebhook({ headers, body, secret, nowSeconds: nowSeconds() }).valid).toBe(true)
  })

  it("sends none of the headers a step may not set (one saved before they were refused): the transport frames the body", async () => {
    const headers = { "Content-Length": "2", Host: "elsewhere.example", "X-Forwarded-For": "10.0.0.1", Forwarded: "for=10.0.0.1", "X-Kept": "yes" }
    const result = await send({ url: `${receiver.url}/hook`, body: event, headers, webhookId: "msg_framing", secret })
    expect(Either.isRight(result)).toBe(true)
    const delivery = receiver.deliveries.at(-1)!
    expect(delivery.headers).toMatchObject({ "content-length": String(Buffer.byteLength(delivery.body)), host: new URL(receiver.url).host, "x-kept": "yes" })
    expect(delivery.headers).not.toHaveProperty("x-forwarded-for")
    expect(delivery.headers).not.toHaveProperty("forwarded")
    expect(JSON.parse(delivery.body)).toEqual(event)
  })

  it("answers text as text", async () => {
    const result = await send({ url: `${receiver.url}/text`, body: event, webhookId: "msg_text", secret })
    expect(Either.getOrThrow(result)).toEqual({ status: 200, body: "thanks" })
  })

  it("answers JSON as JSON, and JSON nested past the depth bound as its text", async () => {
    expect(Either.getOrThrow(await send({ url: `${receiver.url}/json`, body: event, webhookId: "msg_json", secret }))).toEqual({ status: 200, body: { ok: [1] } })
    expect(Either.getOrThrow(await send({ url: `${receiver.url}/deep-json`, body: event, webhookId: "msg_deep", secret }))).toEqual({ status: 200, body: deepJson })
  })

  it("gives up on a receiver that does not answer in time, and closes the connection", async () => {
    const started = Date.now()
    const result = await send({ url: `${receiver.url}/silent`, body: event, webhookId: "msg_slow", secret, timeoutMs: 300 })
    expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "OutboundTimeout", timeoutMs: 300 })
    expect(Date.now() - started).toBeLessThan(3000)
    await expect.poll(() => receiver.abandoned.some(({ path }) => path === "/silent")).toBe(true)
  })

  it("cuts off an answer longer than the limit, declared or not", async () => {
    for (const path of ["/huge-chunked", "/huge-declared"]) {
      const result = await send({ url: `${receiver.url}${path}`, body: event, webhookId: "msg_big", secret, maxResponseBytes: 4096 })
      expect(Either.isLeft(result) && result.left, path).toMatchObject({ _tag: "OutboundResponseTooLarge", maxBytes: 4096 })
    }
  })

  it("does not follow a redirect", async () => {
    const result = await send({ url: `${receiver.url}/redirect`, body: event, webhookId: "msg_redirect", secret })
    expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "WebhookRejected", status: 302 })
    expect(receiver.deliveries.some(({ path }) => path === "/elsewhere")).toBe(false)
  })

  it("fails on a port nobody listens on as a connection failure", async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const { port } = closed.address() as AddressInfo
    await new Promise((resolve) => closed.close(resolve))
    const result = await send({ url: `http://127.0.0.1:${port}/hook`, body: event, webhookId: "msg_closed", secret })
    expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "OutboundConnectionFailed", code: "ECONNREFUSED" })
  })
})

describe("without OUTBOUND_ALLOW, a webhook to this machine", () => {
  const refusedWithNothingSent = async (url: string, resolve?: Resolver) => {
    const before = receiver.deliveries.length
    const result = await send({ url, body: event, webhookId: "msg_refused", secret }, { allow: "", resolve })
    expect(Either.isLeft(result) && result.left, url).toMatchObject({ _tag: "OutboundRefused", reason: "loopback" })
    expect(Either.isLeft(result) && result.left.message, url).toMatch(/is a loopback address; the operator may allow it with OUTBOUND_ALLOW/)
    expect(receiver.deliveries.length).toBe(before)
  }

  it("is refused by address", async () => {
    await refusedWithNothingSent(`${receiver.url}/hook`)
    await refusedWithNothingSent(`http://[::ffff:127.0.0.1]:${receiver.port}/hook`)
  })

  it("is refused by the name localhost", async () => {
    await refusedWithNothingSent(`http://localhost:${receiver.port}/hook`)
  })

  it("is refused by a name that resolves to 127.0.0.1", async () => {
    await refusedWithNothingSent(`http://receiver.test:${receiver.port}/hook`, async (host) => (host === "receiver.test" ? [{ address: "127.0.0.1", family: 4 }] : []))
  })

  it("is refused by this machine's own name, when /etc/hosts maps it to loopback", async (context) => {
    const addresses = await lookup(hostname(), { all: true }).catch(() => [])
    if (addresses.length === 0 || addresses.some(({ address }) => refusedRange(address) !== "loopback")) {
      return context.skip(`${hostname()} does not resolve to loopback here`)
    }
    await refusedWithNothingSent(`http://${hostname()}:${receiver.port}/hook`)
  })
})

describe("the connection goes to the address checked", () => {
  it("asks DNS once: a later answer (rebinding) is never used", async () => {
    const answers = [[{ address: "127.0.0.1", family: 4 as const }]]
    let asked = 0
    const rebinding: Resolver = async () => answers[asked++] ?? [{ address: "169.254.169.254", family: 4 }]
    const result = await send({ url: `http://receiver.test:${receiver.port}/hook`, body: event, webhookId: "msg_rebind", secret }, { allow: "127.0.0.1", resolve: rebinding })
    expect(Either.getOrThrow(result).status).toBe(200)
    expect(asked).toBe(1)
    expect(receiver.deliveries.at(-1)!.headers.host).toBe(`receiver.test:${receiver.port}`)
  })
})
