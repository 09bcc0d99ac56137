/** Format and dimensions from an image's bytes alone, for each format `image.analyze` reads. */
import { describe, expect, it } from "vitest"
import { dimensionsOf, formatOf } from "../../src/media/ImageInfo.ts"
import { renderPromptPng } from "../../src/media/Png.ts"

const bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>) =>
  new Uint8Array(Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "latin1") : Buffer.from(p)))))

/** A GIF header of 300×200 (little-endian). */
const gif = bytes("GIF89a", [0x2c, 0x01, 0xc8, 0x00], [0, 0, 0])
/** A JPEG with an APP0 segment, then SOF0 of 640×480 (height first, big-endian). */
const jpeg = bytes([0xff, 0xd8], [0xff, 0xe0, 0x00, 0x06], "JFIF", [0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0xe0, 0x02, 0x80, 0x03], new Array(12).fill(0))

describe("image info", () => {
  it.each([
    ["png", renderPromptPng("x", 33, 21), { width: 33, height: 21 }],
    ["gif", gif, { width: 300, height: 200 }],
    ["jpeg", jpeg, { width: 640, height: 480 }],
    ["webp", bytes("RIFF", [26, 0, 0, 0], "WEBPVP8 ", [0, 0, 0, 0]), null],
    ["svg", bytes(`<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>`), null],
    ["unknown", bytes("hello"), null]
  ] as const)("%s", (format, image, dimensions) => {
    expect(formatOf(image)).toBe(format)
    expect(dimensionsOf(image, format)).toEqual(dimensions)
  })

  it("a header cut short has no dimensions", () => {
    expect(dimensionsOf(bytes("GIF89a", [1]), "gif")).toBeNull()
    expect(dimensionsOf(bytes([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), "jpeg")).toBeNull()
  })
})
