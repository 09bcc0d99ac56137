/**
 * What an image file is, read from its bytes alone (`image.analyze` offline): its format by
 * signature, and its width and height from the header of PNG, GIF and JPEG.
 */

export type ImageFormat = "png" | "jpeg" | "gif" | "webp" | "svg" | "unknown"

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** The format the bytes open with (the upload rules check the same signatures). */
export const formatOf = (bytes: Uint8Array): ImageFormat => {
  const head = Buffer.from(bytes.subarray(0, 12))
  if (head.subarray(0, 8).equals(PNG_SIGNATURE)) return "png"
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "jpeg"
  if (head.toString("latin1", 0, 4) === "GIF8") return "gif"
  if (head.toString("latin1", 0, 4) === "RIFF" && head.toString("latin1", 8, 12) === "WEBP") return "webp"
  if (/^\s*(<\?xml[^>]*>\s*)?<svg\b/.test(Buffer.from(bytes.subarray(0, 512)).toString("utf8"))) return "svg"
  return "unknown"
}

/** JPEG: the first start-of-frame marker (SOF0 to SOF15 but DHT, JPG and DAC) holds the size. */
const jpegSize = (bytes: Buffer) => {
  for (let at = 2; at + 9 < bytes.length; ) {
    if (bytes[at] !== 0xff) return null
    const marker = bytes[at + 1]
    const length = bytes.readUInt16BE(at + 2)
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { width: bytes.readUInt16BE(at + 7), height: bytes.readUInt16BE(at + 5) }
    }
    at += 2 + length
  }
  return null
}

/** Width and height from the header, or null where the format or a short file does not say. */
export const dimensionsOf = (bytes: Uint8Array, format: ImageFormat): { readonly width: number; readonly height: number } | null => {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  switch (format) {
    case "png":
      return b.length >= 24 ? { width: b.readUInt32BE(16), height: b.readUInt32BE(20) } : null
    case "gif":
      return b.length >= 10 ? { width: b.readUInt16LE(6), height: b.readUInt16LE(8) } : null
    case "jpeg":
      return jpegSize(b)
    default:
      return null
  }
}
