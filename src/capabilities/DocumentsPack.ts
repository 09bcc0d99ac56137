/**
 * The `svc/documents` capability pack (spec 2.9): `documents.pdf.create` renders a workspace
 * document to PDF, stored as a `gen_` file that `assistant.attachments.download` serves and a chat
 * request may attach.
 */
import { Effect, Schema } from "effect"
import { storeFiles } from "../assistant/Files.ts"
import { type AnyCapability, defineCapability, type Role } from "../Capabilities.ts"
import { renderPdf } from "../documents/Pdf.ts"
import { uploaderOf } from "./Attachments.ts"
import { readDocument } from "./Documents.ts"

export const DOCUMENTS_PACK = "svc/documents"

const writers: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member"]

const writes = {
  scope: "workspace",
  surfaces: ["api", "mcp", "agent"],
  roles: writers,
  sensitivity: "low",
  mutating: true,
  changesAccess: false,
  destructive: false,
  needsApproval: false,
  claimedBy: DOCUMENTS_PACK
} as const

/** A file name from a title: what a file system would refuse becomes `_`. */
const pdfName = (title: string) => `${title.replace(/[\\/:*?"<>|\x00-\x1f]/g, "_").slice(0, 200)}.pdf`

export const documentsPdfCreate = defineCapability({
  ...writes,
  name: "documents.pdf.create",
  description:
    "Render a workspace document (its latest version, or the version named) to PDF with its headings, lists and tables; answers the gen_ id of the stored file (download it with assistant.attachments.download).",
  input: Schema.Struct({ documentId: Schema.String.pipe(Schema.maxLength(64)), version: Schema.optional(Schema.Int.pipe(Schema.positive())) }),
  output: Schema.Struct({
    fileId: Schema.String,
    name: Schema.String,
    mediaType: Schema.Literal("application/pdf"),
    size: Schema.Number,
    documentId: Schema.String,
    version: Schema.Int
  }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const document = yield* readDocument(invocation.workspaceId!, input.documentId, input.version)
      // any Markdown renders (what the fonts cannot show becomes ?): a failure here is a defect
      const bytes = yield* Effect.promise(() => renderPdf(document.title, document.content, invocation.at))
      const file = { fileId: invocation.newId("gen"), name: pdfName(document.title), mediaType: "application/pdf", bytes, size: bytes.length }
      yield* storeFiles(uploaderOf(invocation), [file], invocation.meta)
      return { fileId: file.fileId, name: file.name, mediaType: "application/pdf" as const, size: file.size, documentId: document.documentId, version: document.version }
    })
})

export const documentsPackCapabilities: ReadonlyArray<AnyCapability> = [documentsPdfCreate]
