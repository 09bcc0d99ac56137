/** A Markdown document rendered to PDF, parsed back: its pages and the text each shows. */
import { describe, expect, it } from "vitest"
import { renderPdf } from "../../src/documents/Pdf.ts"
import { readPdf } from "../support/pdfText.ts"

const AT = "2024-05-01T12:00:00.000Z"

const report = [
  "# Quarterly report",
  "Revenue grew **12%** over the quarter, see [the sheet](https://example.com).",
  "## Highlights",
  "- Shipped the *documents* pack",
  "  - with PDF export",
  "- Hired two engineers",
  "",
  "1. Plan",
  "2. Build",
  "",
  "### Numbers",
  "| Region | Revenue | Growth |",
  "| --- | ---: | --- |",
  "| North | 1 200 | 10% |",
  "| South | 950 | 15% |",
  "",
  "```",
  "const total = 2150",
  "```",
  "",
  "> Quoted — with a dash and a check ✓"
].join("\n")

describe("renderPdf", () => {
  it("shows the title, headings, list items and table cells as text on one A4 page", async () => {
    const pdf = await readPdf(await renderPdf("Q2 report", report, AT))
    expect(pdf.pageCount).toBe(1)
    expect(pdf.title).toBe("Q2 report")
    expect(pdf.pages[0]).toEqual([
      "Q2 report",
      "Quarterly report",
      "Revenue grew 12% over the quarter, see the sheet.",
      "Highlights",
      "\u2022",
      "Shipped the documents pack",
      "\u2022",
      "with PDF export",
      "\u2022",
      "Hired two engineers",
      "1.",
      "Plan",
      "2.",
      "Build",
      "Numbers",
      "Region",
      "Revenue",
      "Growth",
      "North",
      "1 200",
      "10%",
      "South",
      "950",
      "15%",
      "const total = 2150",
      // what WinAnsi has (the dash) stays; what it has not (the check mark) becomes ?
      "Quoted \u2014 with a dash and a check ?"
    ])
  })

  it("runs a long document on over pages, wrapping long lines", async () => {
    const paragraphs = Array.from({ length: 80 }, (_, i) => `Paragraph ${i + 1}: ${"word ".repeat(40).trim()}`).join("\n\n")
    const pdf = await readPdf(await renderPdf("Long", paragraphs, AT))
    expect(pdf.pageCount).toBeGreaterThan(3)
    expect(pdf.text).toContain("Paragraph 1:")
    expect(pdf.text).toContain("Paragraph 80:")
    const lines = pdf.pages.flat()
    // 40 words do not fit one line of the page
    expect(lines.filter((line) => line.startsWith("Paragraph 80:"))[0].split(" ").length).toBeLessThan(40)
  })

  it("aligns a table column as its delimiter row says", async () => {
    const pdf = await readPdf(await renderPdf("T", "| left | right |\n| :--- | ---: |\n| a | b |\n", AT))
    const xOf = (text: string) => pdf.shown[0].find((item) => item.text === text)!.x
    const columnWidth = (595.28 - 2 * 56) / 2
    expect(xOf("a")).toBeCloseTo(56 + 4)
    // right-aligned: the cell's text ends at its right padding
    expect(xOf("b")).toBeGreaterThan(56 + columnWidth + columnWidth / 2)
    // a longer text in the same right-aligned column starts further left
    expect(xOf("right")).toBeLessThan(xOf("b"))
  })

  it("renders the same document to the same bytes", async () => {
    expect(Buffer.from(await renderPdf("Same", report, AT)).equals(Buffer.from(await renderPdf("Same", report, AT)))).toBe(true)
  })
})
