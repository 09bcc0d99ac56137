/**
 * Events of the file actor (key `file:<fileId>`): one uploaded attachment. The bytes never appear
 * here (they live in the content table, src/assistant/Files.ts): the log carries what the file is,
 * whose it is and its digest. A published `_tag` is never renamed.
 */
import { Schema } from "effect"

export class FileUploaded extends Schema.TaggedClass<FileUploaded>()("file.uploaded", {
  /** `gen_<32 hex>`. */
  fileId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  /** The person who uploaded it (for a key, the key's creator). */
  userId: Schema.NonEmptyString,
  /** The name the client gave the part. */
  name: Schema.String,
  /** The declared type, reduced to `type/subtype`. */
  mediaType: Schema.NonEmptyString,
  size: Schema.NonNegativeInt,
  /** Hex SHA-256 of the bytes. */
  sha256: Schema.NonEmptyString,
  /** ISO 8601. */
  uploadedAt: Schema.String
}) {}

export const FileEvent = Schema.Union(FileUploaded)
export type FileEvent = typeof FileEvent.Type
