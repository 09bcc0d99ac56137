/**
 * `video.generate` with a video model configured (`VIDEO_MODEL` on the OpenAI-compatible
 * endpoint): a local program stands in for the provider's Videos API (`POST /videos`, then
 * `GET /videos/{id}` until `completed`, then `GET /videos/{id}/content`). The stored file is the
 * provider's MP4; a video the provider fails is 502 `video_provider_failed` and stores nothing.
 * Over REST and MCP. (Without `VIDEO_MODEL` it is 409 `video_provider_unavailable`: media.e2e.)
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { filesSchemaOf } from "../../src/assistant/Files.ts"
import { loadConfig } from "../../src/platform/Config.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { capability, type Reply } from "../support/http.ts"
import { connectMcp } from "../support/mcp.ts"
import { enablePacks } from "../support/packs.ts"
import { ok, overMcp } from "../support/plugins.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { expectError } from "./client.ts"

/** The provider's video: an MP4's first box and some bytes (not something the platform could make). */
const providerMp4 = Buffer.concat([Buffer.from("000000186674797069736f6d0000020069736f6d69736f32", "hex"), Buffer.from("frames of a kite")])

let server: Server
let node: TestNode
let mcp: Client
let asOwner: (name: string, input: unknown) => Promise<Reply>
const requests: Array<{ method: string; path: string; authorization: string | undefined; body: any }> = []
/** How many polls a job answers `in_progress` before its end; a prompt with "refuse" fails. */
const jobs = new Map<string, { polls: number; prompt: string }>()

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => {
      const path = req.url ?? ""
      requests.push({ method: req.method ?? "", path, authorization: req.headers.authorization, body: body === "" ? null : JSON.parse(body) })
      const json = (value: unknown, status = 200) => {
        res.statusCode = status
        res.setHeader("content-type", "application/json")
        res.end(JSON.stringify(value))
      }
      if (req.method === "POST" && path === "/v1/videos") {
        const id = `video_${jobs.size + 1}`
        jobs.set(id, { polls: 0, prompt: JSON.parse(body).prompt })
        return json({ id, object: "video", status: "queued", progress: 0 })
      }
      const match = /^\/v1\/videos\/([^/]+)(\/content)?$/.exec(path)
      const job = match === null ? undefined : jobs.get(match[1]!)
      if (job === undefined) return json({ error: { message: "no such video" } }, 404)
      if (match![2] !== undefined) {
        res.setHeader("content-type", "video/mp4")
        return res.end(providerMp4)
      }
      job.polls++
      if (job.polls < 3) return json({ id: match![1], object: "video", status: "in_progress", progress: job.polls * 30 })
      if (job.prompt.includes("refuse")) return json({ id: match![1], object: "video", status: "failed", error: { code: "moderation", message: "prompt refused by policy" } })
      return json({ id: match![1], object: "video", status: "completed", progress: 100 })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  node = await startTestNode({
    assistant: {
      ...loadConfig({}).assistant,
      openaiBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      openaiApiKey: "sk-videos",
      videoModel: "test-video-1"
    },
    // the provider listens on this machine
    outboundAllow: parseOutboundAllow("127.0.0.1")
  })
  const { orgSlug, workspaceSlug, workspaceKey } = node.bootstrap
  asOwner = capability(node.baseUrl, workspaceKey, orgSlug, workspaceSlug)
  mcp = await connectMcp(node.baseUrl, workspaceKey, "media-video-e2e")
  await enablePacks(node, "svc/media-video")
}, 60_000)
afterAll(async () => {
  await mcp?.close()
  await node?.stop()
  await new Promise((resolve) => server?.close(resolve))
})

const storedBytes = async (fileId: string) => {
  const [content] = await node.db.sql`select bytes from ${node.db.sql(`${filesSchemaOf(node.config.dbSchema)}.file_contents`)} where file_id = ${fileId}`
  return content === undefined ? undefined : Buffer.from(content.bytes)
}

describe("video.generate with a video model", () => {
  it("starts a video job, polls it until completed, and stores its content", async () => {
    requests.length = 0
    const made = ok(await asOwner("video.generate", { prompt: "A kite over the sea", durationSeconds: 8 }))
    expect(made).toEqual({ fileId: expect.stringMatching(/^gen_/), name: "a-kite-over-the-sea.mp4", mediaType: "video/mp4", size: providerMp4.length })
    expect((await storedBytes(made.fileId))?.equals(providerMp4)).toBe(true)
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /v1/videos",
      "GET /v1/videos/video_1",
      "GET /v1/videos/video_1",
      "GET /v1/videos/video_1",
      "GET /v1/videos/video_1/content"
    ])
    expect(requests[0]).toMatchObject({ authorization: "Bearer sk-videos", body: { model: "test-video-1", prompt: "A kite over the sea", seconds: "8" } })
  })

  it("answers over MCP the same way", async () => {
    const made = await overMcp(mcp, "video.generate", { prompt: "waves" })
    expect(made).toEqual({ refused: false, body: { fileId: expect.stringMatching(/^gen_/), name: "waves.mp4", mediaType: "video/mp4", size: providerMp4.length } })
    expect(requests.find((r) => r.method === "POST" && r.body?.prompt === "waves")?.body).toMatchObject({ seconds: "4" })
  })

  it("is 502 video_provider_failed with the provider's reason when the video fails, and stores nothing", async () => {
    const [{ count: before }] = await node.db.sql`select count(*)::int as count from ${node.db.table("files")}`
    const reply = await asOwner("video.generate", { prompt: "please refuse this" })
    expectError(reply, 502, "bad_gateway", "video_provider_failed")
    expect(reply.body.error.message).toContain("prompt refused by policy")
    const refused = await overMcp(mcp, "video.generate", { prompt: "refuse again" })
    expect(refused).toMatchObject({ refused: true, body: { error: { code: "bad_gateway", reason: "video_provider_failed" } } })
    const [{ count: after }] = await node.db.sql`select count(*)::int as count from ${node.db.table("files")}`
    expect(after).toBe(before)
  })
})
