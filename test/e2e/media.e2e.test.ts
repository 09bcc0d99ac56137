/**
 * The media packs end to end (issue 14: `svg.generate`, `image.generate/create/analyze/list`,
 * `video.generate`) on a node with no model or provider configured, so the offline renderers
 * answer: over REST with the bootstrap workspace key (reading its writes through `Svc-Position`)
 * over MCP and as the agent's tools in a chat turn of the offline model. What is generated is a `gen_` file of the workspace whose stored bytes are read
 * back here: the SVG sanitized, the PNG decoded to the size asked.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { filesSchemaOf } from "../../src/assistant/Files.ts"
import { decodePng } from "../../src/media/Png.ts"
import { streamChat } from "../support/chat.ts"
import { bootstrapKeyReadingOwnWrites, capability, type Reply } from "../support/http.ts"
import { connectMcp } from "../support/mcp.ts"
import { otherWorkspaceWithKey } from "../support/places.ts"
import { enablePacks } from "../support/packs.ts"
import { ok, overMcp } from "../support/plugins.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { expectError } from "./client.ts"

let node: TestNode
let mcp: Client
let asOther: (name: string, input: unknown) => Promise<Reply>
/** The bootstrap workspace key, reading its own writes. */
const asOwner = bootstrapKeyReadingOwnWrites(() => node)

/** The bytes stored for a file, and its row in the `files` read model. */
const stored = async (fileId: string) => {
  const [content] = await node.db.sql`select bytes from ${node.db.sql(`${filesSchemaOf(node.config.dbSchema)}.file_contents`)} where file_id = ${fileId}`
  const [row] = await node.db.sql`select workspace_id, media_type, size from ${node.db.table("files")} where file_id = ${fileId}`
  return { bytes: content?.bytes as Uint8Array | undefined, row }
}

beforeAll(async () => {
  node = await startTestNode()
  const other = await otherWorkspaceWithKey(node, { person: "other-member", keyName: "other" })
  asOther = (name, input) => capability(node.baseUrl, other.key, node.bootstrap.orgSlug, other.place.slug)(name, input)
  mcp = await connectMcp(node.baseUrl, node.bootstrap.workspaceKey, "media-e2e")
  await enablePacks(node, "svc/media-svg", "svc/media-image", "svc/media-video")
}, 60_000)
afterAll(async () => {
  await mcp?.close()
  await node?.stop()
})

describe("svg.generate", () => {
  it("stores a sanitized SVG drawn from the prompt as a gen_ file of the workspace", async () => {
    const prompt = `a lighthouse <script>alert(1)</script> at dusk`
    const made = ok(await asOwner("svg.generate", { prompt, width: 320, height: 200 }))
    // the offline model writes no SVG for this prompt (it echoes it): the offline drawing answers
    expect(made).toMatchObject({ mediaType: "image/svg+xml", name: "a-lighthouse-script-alert-1-script-at-dusk.svg", drawnBy: "offline" })
    expect(made.fileId).toMatch(/^gen_/)
    expect(made.svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="320" height="200"/)
    expect(made.svg).not.toContain("<script")
    const { bytes, row } = await stored(made.fileId)
    expect(Buffer.from(bytes!).toString("utf8")).toBe(made.svg)
    expect(row).toMatchObject({ media_type: "image/svg+xml", size: made.size })
  })

  it("sanitizes what the model wrote: hostile SVG echoed by the offline model is stored defused", async () => {
    const hostile =
      `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" onload="alert(1)">` +
      `<script>alert(2)</script><a href="javascript:alert(3)"><circle r="5" onclick="alert(4)"></circle></a>` +
      `<use xlink:href="https://evil.example/sprite.svg#i"></use><foreignObject><iframe src="https://evil.example"></iframe></foreignObject></svg>`
    const made = ok(await asOwner("svg.generate", { prompt: hostile }))
    expect(made.drawnBy).toBe("model")
    expect(made.svg).toBe(`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><circle r="5"></circle><use></use></svg>`)
    expect(Buffer.from((await stored(made.fileId)).bytes!).toString("utf8")).toBe(made.svg)
  })

  it("over MCP as well", async () => {
    const made = await overMcp(mcp, "svg.generate", { prompt: "a small square" })
    expect(made.refused).toBe(false)
    expect(made.body.svg).toContain(`width="512" height="512"`)
  })
})

describe("images", () => {
  it("image.generate stores a PNG of the size asked; the same prompt gives the same picture", async () => {
    const first = ok(await asOwner("image.generate", { prompt: "a red fox in snow", width: 96, height: 48 }))
    expect(first).toMatchObject({ mediaType: "image/png", width: 96, height: 48, name: "a-red-fox-in-snow.png" })
    const png = (await stored(first.fileId)).bytes!
    const raster = decodePng(png)
    expect({ width: raster.width, height: raster.height }).toEqual({ width: 96, height: 48 })
    const again = ok(await asOwner("image.generate", { prompt: "a red fox in snow", width: 96, height: 48 }))
    expect(again.fileId).not.toBe(first.fileId)
    expect(Buffer.from((await stored(again.fileId)).bytes!).equals(Buffer.from(png))).toBe(true)
  })

  it("image.create over MCP, default-sized where no size is given", async () => {
    const made = await overMcp(mcp, "image.create", { prompt: "tiles", width: 64 })
    expect(made).toMatchObject({ refused: false, body: { width: 64, height: 1024, mediaType: "image/png" } })
    const raster = decodePng((await stored(made.body.fileId)).bytes!)
    expect({ width: raster.width, height: raster.height }).toEqual({ width: 64, height: 1024 })
  })

  it("image.analyze reports format, size, dimensions and dominant colours; another workspace cannot read the file", async () => {
    const made = ok(await asOwner("image.generate", { prompt: "a blue lake", width: 40, height: 30 }))
    const analysis = ok(await asOwner("image.analyze", { fileId: made.fileId }))
    expect(analysis).toMatchObject({ fileId: made.fileId, format: "png", size: made.size, width: 40, height: 30 })
    expect(analysis.dominantColours.length).toBeGreaterThan(0)
    for (const colour of analysis.dominantColours) expect(colour.hex).toMatch(/^#[0-9a-f]{6}$/)
    const shares = analysis.dominantColours.map((c: { share: number }) => c.share)
    expect([...shares].sort((a, b) => b - a)).toEqual(shares)

    const svg = ok(await asOwner("svg.generate", { prompt: "a star" }))
    expect(ok(await asOwner("image.analyze", { fileId: svg.fileId }))).toMatchObject({ format: "svg", width: null, dominantColours: [] })

    expectError(await asOther("image.analyze", { fileId: made.fileId }), 404, "not_found", "file_not_found")
    expectError(await asOwner("image.analyze", { fileId: "gen_unknown" }), 404, "not_found", "file_not_found")
  })

  it("image.list lists the workspace's images newest first, none of another workspace's", async () => {
    const older = ok(await asOwner("image.generate", { prompt: "first", width: 16, height: 16 }))
    const newer = ok(await asOwner("svg.generate", { prompt: "second", width: 16, height: 16 }))
    const { images } = ok(await asOwner("image.list", {}))
    const ids = images.map((i: { fileId: string }) => i.fileId)
    expect(ids).toContain(older.fileId)
    expect(ids.indexOf(newer.fileId)).toBeLessThan(ids.indexOf(older.fileId))
    expect(images.find((i: { fileId: string }) => i.fileId === older.fileId)).toMatchObject({ mediaType: "image/png", size: older.size })
    expect(ok(await asOther("image.list", {})).images).toEqual([])
    expect(ok(await asOwner("image.list", { limit: 1 })).images).toHaveLength(1)
  })

  it("an empty prompt or a side past 2048 pixels is 400 invalid_input", async () => {
    expectError(await asOwner("image.generate", { prompt: "" }), 400, "bad_request", "invalid_input")
    expectError(await asOwner("image.generate", { prompt: "x", width: 5000 }), 400, "bad_request", "invalid_input")
  })
})

describe("video.generate", () => {
  it("with no video provider is 409 video_provider_unavailable, over REST and MCP", async () => {
    expectError(await asOwner("video.generate", { prompt: "a timelapse" }), 409, "conflict", "video_provider_unavailable")
    const refused = await overMcp(mcp, "video.generate", { prompt: "a timelapse" })
    expect(refused).toMatchObject({ refused: true, body: { error: { code: "conflict", reason: "video_provider_unavailable" } } })
  })
})

describe("as the agent's tools", () => {
  it("a turn generates an image through the checkpoint, and meets video_provider_unavailable as a failed call", async () => {
    const made = await streamChat(node, { content: `/tool image__generate {"prompt":"a kite","width":32,"height":24}` })
    const end = made.events.find((e) => e.type === "tool-call-end")
    expect(end).toMatchObject({ status: "completed", output: { mediaType: "image/png", width: 32, height: 24 } })
    const raster = decodePng((await stored(end.output.fileId)).bytes!)
    expect({ width: raster.width, height: raster.height }).toEqual({ width: 32, height: 24 })

    const video = await streamChat(node, { content: `/tool video__generate {"prompt":"a kite"}` })
    expect(video.events.find((e) => e.type === "tool-call-end")).toMatchObject({ status: "failed", errorReason: "video_provider_unavailable" })
  })
})
