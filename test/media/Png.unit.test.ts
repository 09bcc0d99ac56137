/**
 * The zlib PNG writer and reader: the offline image of a prompt is a valid PNG (checked here
 * against the format, not only by our own decoder: signature, chunk CRCs, IHDR), of the size asked,
 * the same for the same prompt; dominant colours count the pixels.
 */
import { crc32 } from "node:zlib"
import { describe, expect, it } from "vitest"
import { decodePng, dominantColours, encodePng, renderPromptPng } from "../../src/media/Png.ts"

/** The chunks of a PNG, each with whether its CRC is right. */
const chunksOf = (png: Uint8Array) => {
  const bytes = Buffer.from(png)
  const chunks: Array<{ type: string; data: Buffer; crcOk: boolean }> = []
  for (let at = 8; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at)
    const type = bytes.toString("latin1", at + 4, at + 8)
    const data = bytes.subarray(at + 8, at + 8 + length)
    chunks.push({ type, data, crcOk: crc32(bytes.subarray(at + 4, at + 8 + length)) === bytes.readUInt32BE(at + 8 + length) })
    at += 12 + length
  }
  return chunks
}

describe("PNG", () => {
  it("renders a prompt as a valid 8-bit RGB PNG of the size asked", () => {
    const png = renderPromptPng("a red fox", 120, 45)
    expect(Buffer.from(png.subarray(0, 8))).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    const chunks = chunksOf(png)
    expect(chunks.map((c) => c.type)).toEqual(["IHDR", "IDAT", "IEND"])
    expect(chunks.every((c) => c.crcOk)).toBe(true)
    const ihdr = chunks[0].data
    expect([ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[8], ihdr[9]]).toEqual([120, 45, 8, 2])
    const raster = decodePng(png)
    expect({ width: raster.width, height: raster.height, bytes: raster.pixels.length }).toEqual({ width: 120, height: 45, bytes: 120 * 45 * 3 })
  })

  it("the same prompt gives the same bytes, another prompt other ones", () => {
    expect(Buffer.from(renderPromptPng("same", 32, 32)).equals(Buffer.from(renderPromptPng("same", 32, 32)))).toBe(true)
    expect(Buffer.from(renderPromptPng("same", 32, 32)).equals(Buffer.from(renderPromptPng("other", 32, 32)))).toBe(false)
  })

  it("decodes what it encodes, pixel for pixel", () => {
    const pixels = Uint8Array.from({ length: 5 * 3 * 3 }, (_, i) => (i * 37) % 256)
    expect(decodePng(encodePng({ width: 5, height: 3, pixels })).pixels).toEqual(pixels)
  })

  it("dominant colours: the most common first, with their share of the pixels", () => {
    // 3 red pixels, 1 blue
    const pixels = Uint8Array.from([255, 0, 0, 255, 0, 0, 0, 0, 255, 255, 0, 0])
    expect(dominantColours({ width: 2, height: 2, pixels }, 5)).toEqual([
      { hex: "#ff0000", share: 0.75 },
      { hex: "#0000ff", share: 0.25 }
    ])
  })
})
