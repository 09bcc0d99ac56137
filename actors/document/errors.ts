/** The document actor's rejections. */
import { Schema } from "effect"

/** A document id is created once: the same create retried is the same command, which the host
 * answers without deciding again, so this is another create under an id already taken. */
export class DocumentAlreadyExists extends Schema.TaggedError<DocumentAlreadyExists>()("DocumentAlreadyExists", {
  documentId: Schema.String
}) {
  override get message() {
    return `document ${this.documentId} already exists`
  }
}

export class DocumentNotFound extends Schema.TaggedError<DocumentNotFound>()("DocumentNotFound", {
  documentId: Schema.String
}) {
  override get message() {
    return `no document ${this.documentId}`
  }
}

export const DocumentError = Schema.Union(DocumentAlreadyExists, DocumentNotFound)
export type DocumentError = typeof DocumentError.Type
