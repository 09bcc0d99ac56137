/**
 * `image.generate` with an images model configured (`IMAGE_MODEL` on the OpenAI-compatible
 * endpoint): a local endpoint stands in for the provider, answering `POST /images/generations`
 * with a PNG as `b64_json`. The stored file is the provider's image, its size read from it; an
 * endpoint that fails is 502 `image_provider_failed` and stores nothing. With a vision model
 * (`VISION_MODEL`), `image.analyze` sends it the image and answers its description.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { filesSchemaOf } from "../../src/assistant/Files.ts"
import { loadConfig } from "../../src/platform/Config.ts"
import { encodePng } from "../../src/media/Png.ts"
import { capability, type Reply } from "../support/http.ts"
import { enablePacks } from "../support/packs.ts"
import { ok } from "../support/plugins.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { expectError } from "./client.ts"

/** The provider's picture: 3×2, all green (not what the offline renderer would draw). */
const providerPng = Buffer.from(encodePng({ width: 3, height: 2, pixels: new Uint8Array(18).map((_, i) => (i % 3 === 1 ? 200 : 0)) }))

let server: Server
let node: TestNode
const requests: Array<{ path: string; authorization: string | undefined; body: any }> = []
let failNext = false
let asOwner: (name: string, input: unknown) => Promise<Reply>

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => {
      requests.push({ path: req.url ?? "", authorization: req.headers.authorization, body: JSON.parse(body) })
      res.setHeader("content-type", "application/json")
      if (failNext) {
        failNext = false
        res.statusCode = 400
        res.end(JSON.stringify({ error: { message: "prompt refused by policy", type: "invalid_request_error" } }))
        return
      }
      if (req.url === "/v1/chat/completions") {
        res.end(JSON.stringify({
          id: "chatcmpl-1",
          object: "chat.completion",
          created: 1,
          model: "test-vision-1",
          choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "A small green rectangle." } }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
        }))
        return
      }
      res.end(JSON.stringify({ created: 1, data: [{ b64_json: providerPng.toString("base64") }] }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  node = await startTestNode({
    assistant: {
      ...loadConfig({}).assistant,
      openaiBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      openaiApiKey: "sk-images",
      imageModel: "test-image-1",
      visionModel: "test-vision-1"
    },
    // the provider listens on this machine
    outboundAllow: parseOutboundAllow("127.0.0.1")
  })
  const { orgSlug, workspaceSlug, workspaceKey } = node.bootstrap
  asOwner = capability(node.baseUrl, workspaceKey, orgSlug, workspaceSlug)
  await enablePacks(node, "svc/media-image")
}, 60_000)
afterAll(async () => {
  await node?.stop()
  await new Promise((resolve) => server?.close(resolve))
})

describe("image.generate with an images model", () => {
  it("asks the endpoint for the prompt at the size asked and stores its image", async () => {
    const made = ok(await asOwner("image.generate", { prompt: "a green field", width: 256, height: 128 }))
    expect(requests.at(-1)).toMatchObject({
      path: "/v1/images/generations",
      authorization: "Bearer sk-images",
      body: { model: "test-image-1", prompt: "a green field", n: 1, size: "256x128" }
    })
    // the size is the image's own, not the one asked
    expect(made).toMatchObject({ mediaType: "image/png", width: 3, height: 2, size: providerPng.length, name: "a-green-field.png" })
    const [content] = await node.db.sql`select bytes from ${node.db.sql(`${filesSchemaOf(node.config.dbSchema)}.file_contents`)} where file_id = ${made.fileId}`
    expect(Buffer.from(content.bytes).equals(providerPng)).toBe(true)
  })

  it("an endpoint that refuses is 502 image_provider_failed, and no file is stored", async () => {
    const files = async () => (await node.db.sql`select count(*)::int as n from ${node.db.table("files")}`)[0].n
    const before = await files()
    failNext = true
    const refused = await asOwner("image.create", { prompt: "something refused" })
    expectError(refused, 502, "bad_gateway", "image_provider_failed")
    expect(refused.body.error.message).toContain("prompt refused by policy")
    expect(await files()).toBe(before)
  })
})

describe("image.analyze with a vision model", () => {
  it("sends the stored image to the vision model and answers its description beside the file's own facts", async () => {
    const made = ok(await asOwner("image.generate", { prompt: "a field to describe" }))
    const analysed = ok(await asOwner("image.analyze", { fileId: made.fileId }))
    expect(analysed).toMatchObject({ fileId: made.fileId, format: "png", width: 3, height: 2, description: "A small green rectangle." })
    const asked = requests.at(-1)!
    expect(asked).toMatchObject({ path: "/v1/chat/completions", authorization: "Bearer sk-images", body: { model: "test-vision-1" } })
    const parts = asked.body.messages[0].content as Array<any>
    expect(parts.find((p) => p.type === "image_url").image_url.url).toBe(`data:image/png;base64,${providerPng.toString("base64")}`)
  })

  it("a vision model that refuses is 502 image_provider_failed", async () => {
    const made = ok(await asOwner("image.generate", { prompt: "another field" }))
    failNext = true
    expectError(await asOwner("image.analyze", { fileId: made.fileId }), 502, "bad_gateway", "image_provider_failed")
  })
})

describe("an images model on an address the node may not call", () => {
  it("is refused by the outbound guard without OUTBOUND_ALLOW: 502 image_provider_failed, and the endpoint gets nothing", async () => {
    const strict = await startTestNode({ assistant: { ...node.config.assistant } })
    try {
      await enablePacks(strict, "svc/media-image")
      const { orgSlug, workspaceSlug, workspaceKey } = strict.bootstrap
      const before = requests.length
      const refused = await capability(strict.baseUrl, workspaceKey, orgSlug, workspaceSlug)("image.generate", { prompt: "inside" })
      expectError(refused, 502, "bad_gateway", "image_provider_failed")
      expect(refused.body.error.message).toMatch(/is a loopback address/)
      expect(requests.length).toBe(before)
    } finally {
      await strict.stop()
    }
  })
})
