/**
 * Events of the document actor (key `document:<documentId>`): one workspace document, Markdown
 * with a title, every change a new numbered version. A published `_tag` is never renamed.
 */
import { Schema } from "effect"

export class DocumentCreated extends Schema.TaggedClass<DocumentCreated>()("document.created", {
  /** `doc_<32 hex>`. */
  documentId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  /** The person who created it (for a key, the key's creator). */
  userId: Schema.NonEmptyString,
  title: Schema.String,
  /** Markdown. */
  content: Schema.String,
  /** ISO 8601. */
  createdAt: Schema.String
}) {}

/** A new version: the whole title and content, numbered after the last. */
export class DocumentRevised extends Schema.TaggedClass<DocumentRevised>()("document.revised", {
  documentId: Schema.NonEmptyString,
  userId: Schema.NonEmptyString,
  version: Schema.Int.pipe(Schema.greaterThan(1)),
  title: Schema.String,
  content: Schema.String,
  /** ISO 8601. */
  revisedAt: Schema.String
}) {}

export const DocumentEvent = Schema.Union(DocumentCreated, DocumentRevised)
export type DocumentEvent = typeof DocumentEvent.Type
