/**
 * A Markdown document rendered to PDF (pdf-lib, the standard fonts: nothing to embed or fetch):
 * its title, headings, paragraphs, ordered and bulleted lists (nested), tables with a bold header
 * row, a grid and each column's alignment, code blocks, quotes and rules, on A4 pages that follow as the text runs on.
 * Inline emphasis, code and links keep their text. The result depends only on the input: the
 * document's dates are the time given, so the same document renders to the same bytes.
 */
import { marked, type Token, type Tokens } from "marked"
import { PDFDocument, type PDFFont, type PDFPage, rgb, StandardFonts } from "pdf-lib"

const PAGE = { width: 595.28, height: 841.89 }
const MARGIN = 56
const CONTENT_WIDTH = PAGE.width - 2 * MARGIN
const BODY_SIZE = 11
const LEADING = 1.35
const HEADING_SIZES = [22, 18, 15, 13, 12, 11]
const LIST_INDENT = 18
const CELL_PADDING = 4

interface Fonts {
  readonly regular: PDFFont
  readonly bold: PDFFont
  readonly mono: PDFFont
}

/** The text of inline tokens, formatting dropped. */
const inlineText = (tokens: ReadonlyArray<Token> | undefined, fallback: string): string =>
  tokens === undefined
    ? fallback
    : tokens
        .map((t) => {
          if (t.type === "br") return "\n"
          const nested = (t as { tokens?: ReadonlyArray<Token> }).tokens
          return nested !== undefined ? inlineText(nested, "") : ((t as { text?: string }).text ?? "")
        })
        .join("")

class Writer {
  private page!: PDFPage
  private y = 0
  /** The code points each of this document's fonts can show, read once per font. */
  private readonly characterSets = new Map<PDFFont, ReadonlySet<number>>()

  constructor(
    private readonly pdf: PDFDocument,
    private readonly fonts: Fonts
  ) {
    this.newPage()
  }

  private newPage() {
    this.page = this.pdf.addPage([PAGE.width, PAGE.height])
    this.y = PAGE.height - MARGIN
  }

  /** Room for `height` more points on this page, else the next page. */
  private ensure(height: number) {
    if (this.y - height < MARGIN) this.newPage()
  }

  /** What the standard fonts cannot show (outside WinAnsi) becomes `?`, rather than a failure. */
  private printable(font: PDFFont, text: string) {
    let known = this.characterSets.get(font)
    if (known === undefined) this.characterSets.set(font, (known = new Set(font.getCharacterSet())))
    return Array.from(text.replace(/\t/g, "    "), (ch) => (known.has(ch.codePointAt(0)!) ? ch : "?")).join("")
  }

  /** `text` broken into lines of at most `width` points, on its own line breaks and between words. */
  private wrap(text: string, font: PDFFont, size: number, width: number): Array<string> {
    const lines: Array<string> = []
    for (const paragraph of this.printable(font, text).split("\n")) {
      let line = ""
      for (const word of paragraph.split(/ +/)) {
        const candidate = line === "" ? word : `${line} ${word}`
        if (font.widthOfTextAtSize(candidate, size) <= width || line === "") {
          line = candidate
        } else {
          lines.push(line)
          line = word
        }
        // a single word wider than the column is cut where it overflows
        while (font.widthOfTextAtSize(line, size) > width && line.length > 1) {
          let cut = line.length - 1
          while (cut > 1 && font.widthOfTextAtSize(line.slice(0, cut), size) > width) cut--
          lines.push(line.slice(0, cut))
          line = line.slice(cut)
        }
      }
      lines.push(line)
    }
    return lines
  }

  /** A block of text at `x`, wrapped to the content width left from there. */
  text(text: string, options: { readonly font?: PDFFont; readonly size?: number; readonly x?: number; readonly after?: number } = {}) {
    const font = options.font ?? this.fonts.regular
    const size = options.size ?? BODY_SIZE
    const x = options.x ?? MARGIN
    const lineHeight = size * LEADING
    for (const line of this.wrap(text, font, size, MARGIN + CONTENT_WIDTH - x)) {
      this.ensure(lineHeight)
      this.y -= lineHeight
      this.page.drawText(line, { x, y: this.y + (lineHeight - size) / 2, size, font })
    }
    this.y -= options.after ?? size * 0.6
  }

  rule() {
    this.ensure(12)
    this.y -= 6
    this.page.drawLine({ start: { x: MARGIN, y: this.y }, end: { x: MARGIN + CONTENT_WIDTH, y: this.y }, thickness: 0.5, color: rgb(0.6, 0.6, 0.6) })
    this.y -= 6
  }

  blocks(tokens: ReadonlyArray<Token>, x = MARGIN) {
    for (const token of tokens) this.block(token, x)
  }

  private block(token: Token, x: number) {
    switch (token.type) {
      case "heading": {
        const size = HEADING_SIZES[token.depth - 1]
        this.y -= size * 0.4
        this.text(inlineText(token.tokens, token.text), { font: this.fonts.bold, size, x })
        return
      }
      case "paragraph":
      case "text":
        return this.text(inlineText(token.tokens, token.text), { x })
      case "list":
        return this.list(token as Tokens.List, x)
      case "table":
        return this.table(token as Tokens.Table, x)
      case "code":
        return this.text(token.text, { font: this.fonts.mono, size: BODY_SIZE - 1, x: x + 8 })
      case "blockquote":
        return this.blocks(token.tokens ?? [], x + LIST_INDENT)
      case "hr":
        return this.rule()
      default:
        // spaces, raw HTML and definitions show nothing
        return
    }
  }

  private list(list: Tokens.List, x: number) {
    const start = typeof list.start === "number" ? list.start : 1
    list.items.forEach((item, i) => {
      const marker = list.ordered ? `${start + i}.` : "\u2022"
      const size = BODY_SIZE
      this.ensure(size * LEADING)
      this.page.drawText(marker, { x, y: this.y - size * LEADING + (size * LEADING - size) / 2, size, font: this.fonts.regular })
      const [first, ...rest] = item.tokens
      if (first !== undefined && first.type === "text") {
        this.text(inlineText(first.tokens, first.text), { x: x + LIST_INDENT, after: 2 })
        this.blocks(rest, x + LIST_INDENT)
      } else {
        this.blocks(item.tokens, x + LIST_INDENT)
      }
    })
    this.y -= BODY_SIZE * 0.4
  }

  private table(table: Tokens.Table, x: number) {
    const columns = table.header.length
    const width = (MARGIN + CONTENT_WIDTH - x) / columns
    const size = BODY_SIZE - 1
    const lineHeight = size * LEADING
    const row = (cells: ReadonlyArray<Tokens.TableCell>, font: PDFFont) => {
      const lines = cells.map((cell) => this.wrap(inlineText(cell.tokens, cell.text), font, size, width - 2 * CELL_PADDING))
      const height = Math.max(1, ...lines.map((l) => l.length)) * lineHeight + 2 * CELL_PADDING
      this.ensure(height)
      const top = this.y
      lines.forEach((cellLines, c) => {
        cellLines.forEach((line, l) => {
          const y = top - CELL_PADDING - (l + 1) * lineHeight + (lineHeight - size) / 2
          const room = width - 2 * CELL_PADDING - font.widthOfTextAtSize(line, size)
          const shift = cells[c].align === "right" ? room : cells[c].align === "center" ? room / 2 : 0
          this.page.drawText(line, { x: x + c * width + CELL_PADDING + shift, y, size, font })
        })
        this.page.drawRectangle({ x: x + c * width, y: top - height, width, height, borderWidth: 0.5, borderColor: rgb(0.5, 0.5, 0.5) })
      })
      this.y = top - height
    }
    row(table.header, this.fonts.bold)
    for (const cells of table.rows) row(cells, this.fonts.regular)
    this.y -= BODY_SIZE * 0.8
  }
}

/** The PDF of a document: its title, then its Markdown. `at` (ISO 8601) dates it. */
export const renderPdf = async (title: string, markdown: string, at: string): Promise<Uint8Array> => {
  const pdf = await PDFDocument.create({ updateMetadata: false })
  pdf.setTitle(title)
  pdf.setProducer("svc documents")
  pdf.setCreationDate(new Date(at))
  pdf.setModificationDate(new Date(at))
  const fonts: Fonts = {
    regular: await pdf.embedFont(StandardFonts.Helvetica),
    bold: await pdf.embedFont(StandardFonts.HelveticaBold),
    mono: await pdf.embedFont(StandardFonts.Courier)
  }
  const writer = new Writer(pdf, fonts)
  writer.text(title, { font: fonts.bold, size: 24, after: 12 })
  writer.blocks(marked.lexer(markdown))
  return pdf.save()
}
