/**
 * Attachments (docs/chat.md, spec 2.1 `gen_`, 2.2, 7.1, 7.2): the rules an uploaded file keeps,
 * where its bytes live, and what the chat engine reads of them.
 *
 * What a file is (id, owner, name, type, size, digest) is the file actor's `file.uploaded` event,
 * projected into `files`. Its bytes are not in the log: events are JSON (an append carrying ten
 * 10 MiB files would be a 130 MiB statement or Kafka message) and every replay would copy them
 * again. They live in `<dbSchema>_files.file_contents`, one row per file, written before the
 * event. That schema sits beside the read models but outside them, as the embedded log's does: a
 * replay drops and rebuilds the read-model schema from the log, which could not bring bytes back.
 * It is its own schema rather than the log's because with Kafka there is no log schema.
 */
import { Context, Effect, Either, Layer, Schema } from "effect"
import { isUtf8 } from "node:buffer"
import { createHash } from "node:crypto"
import type postgres from "postgres"
import { FileActor } from "../../actors/file/actor.ts"
import { UploadFile } from "../../actors/file/protocol.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { Db, type DbError } from "../../streams/Db.ts"
import { createFileContentsTable, fileContentRows, type FileRow, fileRows, storeFileContents } from "./Queries.ts"
import { AssistantSettings } from "./Settings.ts"

/** Spec 2.2 and 8: a chat request attaches at most 10 files; an upload carries at most as many. */
export const MAX_ATTACHMENTS = 10

/** A file broke an attachment rule (400 `attachment_refused`; after the stream opened, 7.2's
 * `error` event). Nothing of a refused upload is stored. */
export class AttachmentRefused extends Schema.TaggedError<AttachmentRefused>()("AttachmentRefused", {
  reason: Schema.Literal(
    // the upload
    "not_multipart",
    "no_files",
    "too_many_files",
    "file_too_large",
    "empty_file",
    "unsupported_type",
    "content_mismatch",
    // a chat request's ids
    "attachment_not_found",
    "content_unreadable",
    // an A2A file part that names its file by URI: the platform fetches nothing a caller names
    "file_by_uri"
  ),
  message: Schema.String
}) {}

const startsWith = (bytes: Uint8Array, signature: string, at = 0) => {
  if (bytes.length < at + signature.length) return false
  for (let i = 0; i < signature.length; i++) if (bytes[at + i] !== signature.charCodeAt(i)) return false
  return true
}

/**
 * The allowed types, each with what its bytes must be: images and PDF open with their format's
 * signature, text is valid UTF-8 (a model reads it as text). A declared type is believed only when
 * its bytes agree, so a file cannot reach a model as something it is not.
 */
const text = { expected: "valid UTF-8 text", check: isUtf8 }
const contentChecks: Readonly<Record<string, { readonly expected: string; readonly check: (bytes: Uint8Array) => boolean }>> = {
  "text/plain": text,
  "text/markdown": text,
  "text/csv": text,
  "application/json": text,
  "application/pdf": { expected: "a PDF document", check: (bytes) => startsWith(bytes, "%PDF-") },
  "image/png": { expected: "a PNG image", check: (bytes) => startsWith(bytes, "\x89PNG\r\n\x1a\n") },
  "image/jpeg": { expected: "a JPEG image", check: (bytes) => startsWith(bytes, "\xff\xd8\xff") },
  "image/gif": { expected: "a GIF image", check: (bytes) => startsWith(bytes, "GIF87a") || startsWith(bytes, "GIF89a") },
  "image/webp": { expected: "a WebP image", check: (bytes) => startsWith(bytes, "RIFF") && startsWith(bytes, "WEBP", 8) }
}

/** The types an attached file may have. */
export const ALLOWED_MEDIA_TYPES: ReadonlyArray<string> = Object.keys(contentChecks)

/** A type whose bytes are UTF-8 text, which a turn hands the model as text. */
export const isTextType = (mediaType: string): boolean => contentChecks[mediaType] === text

/** A file as the upload route hands it over. */
export interface UploadedFile {
  readonly name: string
  /** As declared by the part's `Content-Type`, parameters and all. */
  readonly mediaType: string
  readonly bytes: Uint8Array
}

/** A file that keeps every rule; `mediaType` is reduced to `type/subtype`. */
export interface AcceptedFile extends UploadedFile {
  readonly size: number
}

const refuse = (reason: AttachmentRefused["reason"], message: string) => Either.left(new AttachmentRefused({ reason, message }))

/**
 * The upload's rules, in order: at least one file and at most 10, then each file in turn is
 * non-empty, at most `maxBytes`, of an allowed type, and its bytes agree with that type. The first
 * rule broken refuses the whole upload.
 */
export const acceptUpload = (
  files: ReadonlyArray<UploadedFile>,
  maxBytes: number
): Either.Either<ReadonlyArray<AcceptedFile>, AttachmentRefused> => {
  if (files.length === 0) return refuse("no_files", "the upload holds no file: send each file as a multipart part with a filename")
  if (files.length > MAX_ATTACHMENTS) return refuse("too_many_files", `an upload holds at most ${MAX_ATTACHMENTS} files, this one ${files.length}`)
  const accepted: Array<AcceptedFile> = []
  for (const file of files) {
    const named = JSON.stringify(file.name)
    const mediaType = file.mediaType.split(";")[0].trim().toLowerCase()
    const size = file.bytes.length
    if (size === 0) return refuse("empty_file", `file ${named} is empty`)
    if (size > maxBytes) return refuse("file_too_large", `file ${named} has ${size} bytes, more than the ${maxBytes} allowed`)
    const content = contentChecks[mediaType]
    if (content === undefined) {
      return refuse("unsupported_type", `file ${named} is ${mediaType || "of no type"}; allowed: ${ALLOWED_MEDIA_TYPES.join(", ")}`)
    }
    if (!content.check(file.bytes)) return refuse("content_mismatch", `file ${named} is declared ${mediaType}, but its bytes are not ${content.expected}`)
    accepted.push({ name: file.name, mediaType, bytes: file.bytes, size })
  }
  return Either.right(accepted)
}

/** The schema of the content table: beside the read models, never dropped by a replay. */
export const filesSchemaOf = (schema: string) => (schema === "public" ? "svc_files" : `${schema}_files`)

export interface FileContentsService {
  /** `<files schema>.file_contents` as an escaped identifier. */
  readonly table: postgres.Helper<string>
}

/** The bytes of uploaded files, one row per file id. */
export class FileContents extends Context.Tag("svc/assistant/FileContents")<FileContents, FileContentsService>() {}

/** Creates the content table if missing (the migrator serves only the read-model schema). */
export const fileContentsLayer: Layer.Layer<FileContents, DbError, Db> = Layer.effect(
  FileContents,
  Effect.gen(function* () {
    const db = yield* Db
    const table = yield* createFileContentsTable(filesSchemaOf(db.schema))
    return { table }
  })
)

/** Who uploads, and where. */
export interface Uploader {
  readonly orgId: string
  readonly workspaceId: string
  readonly userId: string
}

/** An accepted file and the `gen_` id it gets. */
export interface NewFile extends AcceptedFile {
  readonly fileId: string
}

/**
 * Stores accepted files: the bytes first, then each file's `file.uploaded` through its actor, so
 * every file the log records has its bytes. The same ids again (an idempotent retry) store
 * nothing twice.
 */
export const storeFiles = Effect.fn("Files.storeFiles")(function* (uploader: Uploader, files: ReadonlyArray<NewFile>, meta: CommandMeta) {
  const contents = yield* FileContents
  const host = yield* ActorHost
  yield* storeFileContents(contents.table, files)
  yield* Effect.forEach(
    files,
    (file) =>
      host.send(
        FileActor,
        file.fileId,
        new UploadFile({
          fileId: file.fileId,
          ...uploader,
          name: file.name,
          mediaType: file.mediaType,
          size: file.size,
          sha256: createHash("sha256").update(file.bytes).digest("hex")
        }),
        meta
      ),
    { concurrency: "unbounded", discard: true }
  )
})

/**
 * An upload: the files that keep every rule (`acceptUpload`, with the operator's size limit),
 * stored under new `gen_` ids. A file that breaks a rule refuses them all, and nothing is stored.
 */
export const uploadFiles = Effect.fn("Files.uploadFiles")(function* (
  uploader: Uploader,
  files: ReadonlyArray<UploadedFile>,
  newId: (prefix: string) => string,
  meta: CommandMeta
) {
  const settings = yield* AssistantSettings
  const accepted = yield* acceptUpload(files, settings.maxAttachmentBytes)
  const stored = accepted.map((file): NewFile => ({ ...file, fileId: newId("gen") }))
  yield* storeFiles(uploader, stored, meta)
  return stored
})

const tooManyIds = (ids: ReadonlyArray<string>) =>
  ids.length > MAX_ATTACHMENTS
    ? Effect.fail(new AttachmentRefused({ reason: "too_many_files", message: `a request attaches at most ${MAX_ATTACHMENTS} files, this one ${ids.length}` }))
    : Effect.void

/** `ids`' rows in their order; an id with none (unknown, or another workspace's) refuses them all. */
const inOrder = <A>(ids: ReadonlyArray<string>, found: ReadonlyMap<string, A>) =>
  Effect.forEach(ids, (id) => {
    const row = found.get(id)
    return row === undefined
      ? Effect.fail(new AttachmentRefused({ reason: "attachment_not_found", message: `no uploaded file ${id} in this workspace` }))
      : Effect.succeed(row)
  })

/** Before a chat stream opens: every id names a file uploaded to this workspace, at most 10 of them. */
export const checkAttachments = Effect.fn("Files.checkAttachments")(function* (workspaceId: string, ids: ReadonlyArray<string>) {
  yield* tooManyIds(ids)
  // most chat requests attach nothing: no query for them
  if (ids.length === 0) return [] as ReadonlyArray<FileRow>
  const rows = yield* fileRows(workspaceId, ids)
  const found = new Map(rows.map((row): [string, FileRow] => [row.id, row]))
  return yield* inOrder(ids, found)
})

/** A file's bytes, as a turn hands them to the model. */
export interface AttachmentContent {
  readonly id: string
  readonly name: string
  readonly mediaType: string
  readonly bytes: Uint8Array
}

/** While a turn reads them: the files and their bytes, checked as `checkAttachments` does; a file
 * whose bytes are gone is `content_unreadable`. */
export const readAttachments = Effect.fn("Files.readAttachments")(function* (workspaceId: string, ids: ReadonlyArray<string>) {
  yield* tooManyIds(ids)
  if (ids.length === 0) return [] as ReadonlyArray<AttachmentContent>
  const contents = yield* FileContents
  const rows = yield* fileContentRows(contents.table, workspaceId, ids)
  const files = yield* inOrder(ids, new Map(rows.map((r) => [r.id, r])))
  return yield* Effect.forEach(files, (r) =>
    r.bytes === null
      ? Effect.fail(new AttachmentRefused({ reason: "content_unreadable", message: `the bytes of file ${r.id} cannot be read` }))
      : Effect.succeed<AttachmentContent>({ id: r.id, name: r.name, mediaType: r.mediaType, bytes: r.bytes })
  )
})
