/**
 * Workspace documents end to end (spec 2.9, builtin `document.create/list/read`): over REST with
 * the bootstrap workspace key, reading its writes through `Svc-Position`, and over MCP; another
 * workspace sees none of them. `documents.pdf.create` (pack `svc/documents`) renders one to a
 * `gen_` PDF, downloaded and parsed back; `documents.generate` has the model (the offline model
 * of the test node's default tier) write one, also as the agent's tool in a turn.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bootstrapKeyReadingOwnWrites, capability, type Reply } from "../support/http.ts"
import { connectMcp } from "../support/mcp.ts"
import { otherWorkspaceWithKey } from "../support/places.ts"
import { ok, overMcp } from "../support/plugins.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { streamChat } from "../support/chat.ts"
import { enablePacks } from "../support/packs.ts"
import { readPdf } from "../support/pdfText.ts"
import { expectError } from "./client.ts"

let node: TestNode
let mcp: Client
let asOther: (name: string, input: unknown) => Promise<Reply>
/** The bootstrap workspace key, reading its own writes. */
const asOwner = bootstrapKeyReadingOwnWrites(() => node)

beforeAll(async () => {
  node = await startTestNode()
  // documents.generate and documents.pdf.create are the svc/documents pack's: the organization installs and enables it
  await enablePacks(node, "svc/documents")
  const other = await otherWorkspaceWithKey(node, { person: "other-member", keyName: "other" })
  asOther = (name, input) => capability(node.baseUrl, other.key, node.bootstrap.orgSlug, other.place.slug)(name, input)
  mcp = await connectMcp(node.baseUrl, node.bootstrap.workspaceKey, "documents-e2e")
}, 60_000)
afterAll(async () => {
  await mcp?.close()
  await node?.stop()
})

const plan = "# Plan\n\n- design\n- build\n\n| step | owner |\n| --- | --- |\n| 1 | ana |\n"

describe("workspace documents", () => {
  it("creates a document at version 1, reads it back and lists it", async () => {
    const created = ok(await asOwner("document.create", { title: "Plan", content: plan }))
    expect(created).toMatchObject({ title: "Plan", version: 1, content: plan })
    expect(created.documentId).toMatch(/^doc_[0-9a-f]{32}$/)

    expect(ok(await asOwner("document.read", { documentId: created.documentId }))).toEqual(created)
    const listed = ok(await asOwner("document.list", {}))
    expect(listed.documents).toContainEqual({
      documentId: created.documentId,
      title: "Plan",
      version: 1,
      createdBy: created.createdBy,
      createdAt: created.createdAt,
      updatedAt: created.updatedAt
    })
  })

  it("refuses a version the document does not have, and an unknown document, with 404 document_not_found", async () => {
    const { documentId } = ok(await asOwner("document.create", { title: "Short", content: "one line" }))
    expectError(await asOwner("document.read", { documentId, version: 2 }), 404, "not_found", "document_not_found")
    expectError(await asOwner("document.read", { documentId: "doc_unknown" }), 404, "not_found", "document_not_found")
  })

  it("refuses an empty title with 400", async () => {
    const reply = await asOwner("document.create", { title: "", content: "x" })
    expect(reply.status).toBe(400)
  })

  it("keeps a workspace's documents from another workspace", async () => {
    const { documentId } = ok(await asOwner("document.create", { title: "Private", content: "ours" }))
    expectError(await asOther("document.read", { documentId }), 404, "not_found", "document_not_found")
    expect(ok(await asOther("document.list", {})).documents).toEqual([])
  })

  it("serves the same capabilities over MCP", async () => {
    const created = await overMcp(mcp, "document.create", { title: "Over MCP", content: "- a\n- b\n" })
    expect(created.refused).toBe(false)
    const read = await overMcp(mcp, "document.read", { documentId: created.body.documentId })
    expect(read).toEqual({ refused: false, body: created.body })
  })
})

describe("documents.pdf.create", () => {
  it("renders a document to a PDF file the workspace downloads, its headings, list items and table cells in its text", async () => {
    const { documentId } = ok(await asOwner("document.create", { title: "Plan", content: plan }))
    const file = ok(await asOwner("documents.pdf.create", { documentId }))
    expect(file).toMatchObject({ name: "Plan.pdf", mediaType: "application/pdf", documentId, version: 1 })
    expect(file.fileId).toMatch(/^gen_[0-9a-f]{32}$/)

    const download = ok(await asOwner("assistant.attachments.download", { fileId: file.fileId }))
    expect(download).toMatchObject({ id: file.fileId, name: "Plan.pdf", mediaType: "application/pdf", size: file.size })
    const pdf = await readPdf(Buffer.from(download.contentBase64, "base64"))
    expect(pdf.pageCount).toBe(1)
    expect(pdf.pages[0]).toEqual(["Plan", "Plan", "\u2022", "design", "\u2022", "build", "step", "owner", "1", "ana"])
  })

  it("refuses a document of another workspace, and keeps the file from it", async () => {
    const { documentId } = ok(await asOwner("document.create", { title: "Ours", content: "# Ours" }))
    expectError(await asOther("documents.pdf.create", { documentId }), 404, "not_found", "document_not_found")
    const file = ok(await asOwner("documents.pdf.create", { documentId }))
    expectError(await asOther("assistant.attachments.download", { fileId: file.fileId }), 404, "not_found", "file_not_found")
  })
})

describe("documents.generate", () => {
  it("has the model write a new document, then a new version of it", async () => {
    // the offline model answers a plain prompt with `You said: <prompt>`
    const written = ok(await asOwner("documents.generate", { prompt: "Launch checklist for the beta" }))
    expect(written).toMatchObject({ title: "Launch checklist for the beta", version: 1, content: "You said: Launch checklist for the beta" })
    expect(ok(await asOwner("document.read", { documentId: written.documentId }))).toEqual(written)

    const revised = ok(await asOwner("documents.generate", { prompt: "Add the owners", documentId: written.documentId, title: "Beta launch" }))
    expect(revised).toMatchObject({ documentId: written.documentId, title: "Beta launch", version: 2, content: "You said: Add the owners" })
    expect(ok(await asOwner("document.read", { documentId: written.documentId }))).toEqual(revised)
    expect(ok(await asOwner("document.read", { documentId: written.documentId, version: 1 }))).toEqual(written)
  })

  it("over MCP: writes a document, renders it to PDF and downloads the file", async () => {
    const written = await overMcp(mcp, "documents.generate", { prompt: "Release notes", title: "Notes" })
    expect(written).toMatchObject({ refused: false, body: { title: "Notes", version: 1 } })
    const file = await overMcp(mcp, "documents.pdf.create", { documentId: written.body.documentId })
    expect(file).toMatchObject({ refused: false, body: { name: "Notes.pdf", mediaType: "application/pdf" } })
    const download = await overMcp(mcp, "assistant.attachments.download", { fileId: file.body.fileId })
    expect(download.refused).toBe(false)
    expect((await readPdf(Buffer.from(download.body.contentBase64, "base64"))).pages[0]).toEqual(["Notes", "You said: Release notes"])
  })

  it("refuses to write into another workspace's document", async () => {
    const { documentId } = ok(await asOwner("document.create", { title: "Ours", content: "x" }))
    expectError(await asOther("documents.generate", { prompt: "overwrite", documentId }), 404, "not_found", "document_not_found")
  })

  it("as the agent's tools: a turn writes a document, the next renders it to a PDF the workspace downloads", async () => {
    const generated = await streamChat(node, { content: '/tool documents__generate {"prompt":"Team offsite agenda","title":"Offsite"}' })
    const written = generated.events.find((e) => e.type === "tool-call-end")
    expect(written).toMatchObject({ status: "completed", output: { title: "Offsite", version: 1, content: "You said: Team offsite agenda" } })

    const rendered = await streamChat(node, { content: `/tool documents__pdf__create {"documentId":"${written.output.documentId}"}` })
    const file = rendered.events.find((e) => e.type === "tool-call-end")
    expect(file).toMatchObject({ status: "completed", output: { name: "Offsite.pdf", mediaType: "application/pdf", documentId: written.output.documentId } })

    // the turn's answer names no log position: the file's row may take a moment to be read
    let reply = await asOwner("assistant.attachments.download", { fileId: file.output.fileId })
    for (let i = 0; i < 50 && reply.status === 404; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      reply = await asOwner("assistant.attachments.download", { fileId: file.output.fileId })
    }
    const pdf = await readPdf(Buffer.from(ok(reply).contentBase64, "base64"))
    expect(pdf.pageCount).toBe(1)
    expect(pdf.pages[0]).toEqual(["Offsite", "You said: Team offsite agenda"])
  })
})
