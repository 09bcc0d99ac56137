/**
 * The `svc/documents` capability pack (spec 2.9): `documents.generate` has a model write a
 * workspace document from a prompt; `documents.pdf.create` renders a workspace document to PDF,
 * stored as a `gen_` file that `assistant.attachments.download` serves and a chat request may attach.
 */
import { generateText } from "ai"
import { Effect, Schema } from "effect"
import { storeFiles } from "../assistant/Files.ts"
import { resolveTurnModel } from "../assistant/models/resolve.ts"
import { type AnyCapability, implement } from "../checkpoint/Capability.ts"
import { renderPdf } from "./Pdf.ts"
import { clipped } from "../platform/StorableText.ts"
import { uploaderOf } from "../assistant/Attachments.ts"
import * as Api from "./Api.ts"
import { Markdown } from "./Api.ts"
import { createDocument, readDocument, reviseDocument } from "./Documents.ts"

/** A file name from a title: what a file system would refuse becomes `_`. */
const pdfName = (title: string) => `${title.replace(/[\\/:*?"<>|\x00-\x1f]/g, "_").slice(0, 200)}.pdf`

export const documentsPdfCreate = implement(Api.documentsPdfCreate, (invocation, input) =>
  Effect.gen(function* () {
    const document = yield* readDocument(invocation.workspaceId!, input.documentId, input.version)
    // any Markdown renders (what the fonts cannot show becomes ?): a failure here is a defect
    const bytes = yield* Effect.promise(() => renderPdf(document.title, document.content, invocation.at))
    const file = { fileId: invocation.newId("gen"), name: pdfName(document.title), mediaType: "application/pdf", bytes, size: bytes.length }
    yield* storeFiles(uploaderOf(invocation), [file], invocation.meta)
    return { fileId: file.fileId, name: file.name, mediaType: "application/pdf" as const, size: file.size, documentId: document.documentId, version: document.version }
  })
)

/** The model that writes a document did not answer (502 `document_model_failed`). */
export class DocumentModelFailed extends Schema.TaggedError<DocumentModelFailed>()("DocumentModelFailed", { message: Schema.String }) {}

const WRITER_PROMPT = [
  "You write documents in Markdown for a workspace.",
  "Answer with the document only: a title as a level-1 heading, then sections with headings, lists and tables where they help.",
  "No preamble and no closing remarks."
].join("\n")

/** The title a written document gets when the caller names none: its first heading, else the prompt's start. */
export const titleOf = (markdown: string, prompt: string): string => {
  const heading = /^#{1,6}[ \t]+(.+?)[ \t#]*$/m.exec(markdown)?.[1]?.trim()
  const fallback = prompt.replace(/\s+/g, " ").trim()
  const title = heading !== undefined && heading !== "" ? heading : fallback === "" ? "Untitled" : fallback
  return clipped(title, 80)
}

export const documentsGenerate = implement(Api.documentsGenerate, (invocation, input) =>
  Effect.gen(function* () {
    // a revision is refused before any model is paid for when the document is not the workspace's
    if (input.documentId !== undefined) yield* readDocument(invocation.workspaceId!, input.documentId)
    const model = yield* resolveTurnModel({ orgId: invocation.orgId!, tier: input.tier })
    const written = yield* Effect.tryPromise({
      try: (signal) =>
        generateText({ model: model.model, system: WRITER_PROMPT, prompt: input.prompt, providerOptions: model.providerOptions, abortSignal: signal, maxRetries: 0 }),
      catch: (e) => new DocumentModelFailed({ message: `the model ${model.modelId} wrote no document: ${e instanceof Error ? e.message : String(e)}` })
    })
    const content = yield* Schema.decode(Markdown)(written.text.trim()).pipe(
      Effect.mapError(() => new DocumentModelFailed({ message: `the model ${model.modelId} wrote more than a document holds` }))
    )
    const title = input.title ?? titleOf(content, input.prompt)
    if (input.documentId === undefined) return yield* createDocument(invocation, title, content)
    return yield* reviseDocument(invocation, input.documentId, title, content)
  })
)

export const documentsPackCapabilities: ReadonlyArray<AnyCapability> = [documentsGenerate, documentsPdfCreate]
