/**
 * PNG without a library (none is installed): node's zlib deflates the scanlines and computes each
 * chunk's CRC-32. Encodes 8-bit RGB; decodes 8-bit RGB/RGBA/grey PNGs (no interlacing, no
 * palette), which is what `image.analyze` reads offline and what the tests read back.
 */
import { crc32, deflateSync, inflateSync } from "node:zlib"
import { promptSeed } from "./Svg.ts"

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

const chunk = (type: string, data: Uint8Array) => {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, "latin1")
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
  return Buffer.concat([head, data, crc])
}

/** An RGB raster: `pixels` holds width × height × 3 bytes, row by row. */
export interface Raster {
  readonly width: number
  readonly height: number
  readonly pixels: Uint8Array
}

export const encodePng = ({ width, height, pixels }: Raster): Uint8Array => {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([8, 2, 0, 0, 0], 8) // 8-bit, truecolour, deflate, adaptive filters, no interlace
  const rows = Buffer.alloc((width * 3 + 1) * height)
  for (let y = 0; y < height; y++) {
    // filter type 0 (none) per row
    Buffer.from(pixels.buffer, pixels.byteOffset + y * width * 3, width * 3).copy(rows, y * (width * 3 + 1) + 1)
  }
  return Buffer.concat([SIGNATURE, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(rows)), chunk("IEND", new Uint8Array())])
}

export class PngUnreadable extends Error {}

const paeth = (a: number, b: number, c: number) => {
  const p = a + b - c
  const pa = Math.abs(p - a)
  const pb = Math.abs(p - b)
  const pc = Math.abs(p - c)
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
}

/** The raster of a PNG, as RGB; throws `PngUnreadable` for what this decoder does not read. */
export const decodePng = (png: Uint8Array): Raster => {
  const bytes = Buffer.from(png.buffer, png.byteOffset, png.byteLength)
  if (bytes.length < 8 || !bytes.subarray(0, 8).equals(SIGNATURE)) throw new PngUnreadable("not a PNG")
  let width = 0
  let height = 0
  let channels = 0
  const idat: Array<Buffer> = []
  for (let at = 8; at + 8 <= bytes.length; ) {
    const length = bytes.readUInt32BE(at)
    const type = bytes.toString("latin1", at + 4, at + 8)
    const data = bytes.subarray(at + 8, at + 8 + length)
    if (type === "IHDR") {
      width = data.readUInt32BE(0)
      height = data.readUInt32BE(4)
      const [depth, colourType, , , interlace] = data.subarray(8, 13)
      channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[colourType] ?? 0
      if (depth !== 8 || channels === 0 || interlace !== 0) throw new PngUnreadable(`PNG colour type ${colourType}, depth ${depth}, interlace ${interlace} not read`)
    } else if (type === "IDAT") idat.push(data)
    else if (type === "IEND") break
    at += 12 + length
  }
  if (width === 0 || height === 0) throw new PngUnreadable("PNG without a header")
  const raw = inflateSync(Buffer.concat(idat))
  const stride = width * channels
  const current = Buffer.alloc(stride)
  let previous = Buffer.alloc(stride)
  const pixels = new Uint8Array(width * height * 3)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    for (let i = 0; i < stride; i++) {
      const left = i >= channels ? current[i - channels] : 0
      const up = previous[i]
      const upLeft = i >= channels ? previous[i - channels] : 0
      const predictor = [0, left, up, (left + up) >> 1, paeth(left, up, upLeft)][filter] ?? 0
      current[i] = (line[i] + predictor) & 0xff
    }
    for (let x = 0; x < width; x++) {
      const p = current.subarray(x * channels, x * channels + channels)
      pixels.set(channels < 3 ? [p[0], p[0], p[0]] : [p[0], p[1], p[2]], (y * width + x) * 3)
    }
    previous = Buffer.from(current)
  }
  return { width, height, pixels }
}

/** The offline image: a deterministic gradient with bands, its colours drawn from the prompt. */
export const renderPromptPng = (prompt: string, width: number, height: number): Uint8Array => {
  const seed = promptSeed(prompt)
  const [from, to, band] = [seed.slice(0, 3), seed.slice(3, 6), seed.slice(6, 9)]
  const bandEvery = 8 + (seed[9] % 24)
  const pixels = new Uint8Array(width * height * 3)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const t = (x + y) / Math.max(1, width + height - 2)
      const inBand = Math.floor(y / bandEvery) % 4 === 3
      const at = (y * width + x) * 3
      for (let c = 0; c < 3; c++) pixels[at + c] = inBand ? band[c] : Math.round(from[c] + (to[c] - from[c]) * t)
    }
  }
  return encodePng({ width, height, pixels })
}

const hex = (rgb: ReadonlyArray<number>) => `#${rgb.map((c) => c.toString(16).padStart(2, "0")).join("")}`

/** The most common colours, each channel quantized to 16 levels (so near colours count as one),
 * as `#rrggbb` of the bucket's mean with its share of the pixels, most common first. */
export const dominantColours = ({ pixels }: Raster, count: number) => {
  const buckets = new Map<number, { n: number; r: number; g: number; b: number }>()
  const total = pixels.length / 3
  for (let i = 0; i < pixels.length; i += 3) {
    const key = ((pixels[i] >> 4) << 8) | ((pixels[i + 1] >> 4) << 4) | (pixels[i + 2] >> 4)
    const b = buckets.get(key) ?? { n: 0, r: 0, g: 0, b: 0 }
    b.n++
    b.r += pixels[i]
    b.g += pixels[i + 1]
    b.b += pixels[i + 2]
    buckets.set(key, b)
  }
  return [...buckets.values()]
    .sort((a, b) => b.n - a.n)
    .slice(0, count)
    .map((b) => ({ hex: hex([b.r, b.g, b.b].map((v) => Math.round(v / b.n))), share: Math.round((b.n / total) * 1000) / 1000 }))
}
