/**
 * The parts of a caller's message (A2A v0.3: text, data and file parts) as its turn reads them and
 * as its task's history keeps them (docs/a2a.md). Text is the turn's content as sent; a data part
 * is its JSON there; a file part is an attachment of the turn, under the upload's rules
 * (src/assistant/Files.ts), so the turn reads it as it reads any attached file.
 */
import { Either } from "effect"
import type { Part } from "../../actors/a2atask/events.ts"
import type { PersonSealer } from "../audit/PersonalData.ts"
import { AttachmentRefused, type NewFile, type UploadedFile } from "../assistant/Files.ts"
import type { IncomingPart } from "./Protocol.ts"

/** The turn's text: the text parts and the data parts' JSON, in order, one per paragraph. */
export const contentOf = (parts: ReadonlyArray<IncomingPart>): string =>
  parts.flatMap((part) => (part.kind === "text" ? [part.text] : part.kind === "data" ? [JSON.stringify(part.data)] : [])).join("\n\n")

type FileOf<P> = P extends { readonly kind: "file"; readonly file: infer F } ? F : never
type IncomingFile = FileOf<IncomingPart>

const filesOf = (parts: ReadonlyArray<IncomingPart>): ReadonlyArray<IncomingFile> => parts.flatMap((part) => (part.kind === "file" ? [part.file] : []))

/** A file part without a name is named by its place among the message's files. */
const nameOf = (file: IncomingFile, index: number) => file.name ?? `file-${index + 1}`

/** The message's files as an upload; a file named by URI is refused: the platform fetches nothing a caller names. */
export const uploadsOf = (parts: ReadonlyArray<IncomingPart>): Either.Either<ReadonlyArray<UploadedFile>, AttachmentRefused> => {
  const uploads: Array<UploadedFile> = []
  for (const [index, file] of filesOf(parts).entries()) {
    if ("uri" in file) {
      return Either.left(new AttachmentRefused({ reason: "file_by_uri", message: `file ${JSON.stringify(nameOf(file, index))} is named by a URI, which this agent does not fetch: send its bytes` }))
    }
    uploads.push({ name: nameOf(file, index), mediaType: file.mimeType ?? "", bytes: file.bytes })
  }
  return Either.right(uploads)
}

/** The URI a kept file part names its stored attachment by. */
export const attachmentUri = (fileId: string) => `urn:svc:attachment:${fileId}`

/**
 * The parts as the task's history keeps them: each as sent, without its metadata; a file's bytes
 * are the attachment `stored` holds for it (the files in the message's order), named by its URI.
 */
export const keptParts = (parts: ReadonlyArray<IncomingPart>, stored: ReadonlyArray<NewFile>): ReadonlyArray<Part> => {
  let files = 0
  return parts.map((part): Part => {
    switch (part.kind) {
      case "text":
        return { kind: "text", text: part.text }
      case "data":
        return { kind: "data", data: part.data }
      case "file": {
        const { name, mimeType } = part.file
        return { kind: "file", file: { ...(name === undefined ? {} : { name }), ...(mimeType === undefined ? {} : { mimeType }), uri: attachmentUri(stored[files++].fileId) } }
      }
    }
  })
}

/**
 * The parts with the person's words sealed under their key (actors/personal.ts), as the task's
 * events keep them: a text part's text, and each member of a data part, as its JSON text.
 */
export const sealedParts = <P extends Part>(sealer: PersonSealer, parts: ReadonlyArray<P>): ReadonlyArray<P> =>
  parts.map((part): P => {
    if (part.kind === "text") return { ...part, text: sealer.seal(part.text) }
    if (part.kind === "data") return { ...part, data: Object.fromEntries(Object.entries(part.data).map(([name, value]) => [name, sealer.sealJson(value)])) }
    return part
  })
