/** The file actor's only rejection. */
import { Schema } from "effect"

/** A file id is recorded once: the same upload retried is the same command, which the host answers
 * without deciding again, so this is another upload under an id already taken. */
export class FileAlreadyExists extends Schema.TaggedError<FileAlreadyExists>()("FileAlreadyExists", {
  fileId: Schema.String
}) {
  override get message() {
    return `file ${this.fileId} already exists`
  }
}

export const FileError = FileAlreadyExists
export type FileError = FileAlreadyExists
