/**
 * A PDF read back: its page count and, per page, the text its content streams show. Enough for
 * what src/documents/Pdf.ts writes (standard fonts, WinAnsi, one string per `Tj`), read with
 * pdf-lib's parser and stream decoders, not with the code that wrote it.
 */
import { decodePDFRawStream, PDFArray, PDFDocument, PDFRawStream, type PDFRef } from "pdf-lib"

const streamsOf = (pdf: PDFDocument, contents: unknown): Array<PDFRawStream> => {
  if (contents instanceof PDFRawStream) return [contents]
  if (contents instanceof PDFArray) return contents.asArray().flatMap((ref) => streamsOf(pdf, pdf.context.lookup(ref as PDFRef)))
  return []
}

/** Windows-1252's 0x80 to 0x9F (Node decodes the range as Latin-1's control characters); the rest is Latin-1. */
const WIN1252_HIGH = "\u20ac\ufffd\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\ufffd\u017d\ufffd\ufffd\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\ufffd\u017e\u0178"
const win1252 = (bytes: Buffer) => Array.from(bytes, (b) => (b >= 0x80 && b <= 0x9f ? WIN1252_HIGH[b - 0x80] : String.fromCharCode(b))).join("")

/** A string a page shows, and where its text starts. */
export interface Shown {
  readonly text: string
  readonly x: number
  readonly y: number
}

/** The strings a content stream shows, one per text operator, in order, each at the text matrix
 * (`1 0 0 1 x y Tm`) set before it. */
const shownStrings = (content: string): Array<Shown> =>
  [...content.matchAll(/1 0 0 1 (-?[\d.]+) (-?[\d.]+) Tm\s*(?:<([0-9A-Fa-f]*)>|\(((?:\\.|[^\\)])*)\))\s*Tj/g)].map(([, x, y, hex, literal]) => ({
    text: hex !== undefined ? win1252(Buffer.from(hex, "hex")) : literal.replace(/\\(.)/g, "$1"),
    x: Number(x),
    y: Number(y)
  }))

export const readPdf = async (bytes: Uint8Array) => {
  const pdf = await PDFDocument.load(bytes, { updateMetadata: false })
  const shown = pdf.getPages().map((page) =>
    streamsOf(pdf, page.node.Contents()).flatMap((stream) => shownStrings(Buffer.from(decodePDFRawStream(stream).decode()).toString("latin1")))
  )
  const pages = shown.map((items) => items.map((item) => item.text))
  return { pageCount: pdf.getPageCount(), title: pdf.getTitle(), shown, pages, text: pages.map((lines) => lines.join("\n")).join("\n") }
}
