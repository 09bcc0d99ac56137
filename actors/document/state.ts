/** A document is absent until created; after, its latest version (earlier ones live in the
 * `document_versions` read model, the actor needs only the number to go on from). */
import { Schema } from "effect"

export const DocumentState = Schema.Union(
  Schema.TaggedStruct("Absent", {}),
  Schema.TaggedStruct("Present", {
    documentId: Schema.String,
    orgId: Schema.String,
    workspaceId: Schema.String,
    createdBy: Schema.String,
    createdAt: Schema.String,
    version: Schema.Int,
    title: Schema.String,
    content: Schema.String,
    /** Who wrote the latest version, and when. */
    updatedBy: Schema.String,
    updatedAt: Schema.String
  })
)
export type DocumentState = typeof DocumentState.Type

export const initialDocumentState: DocumentState = { _tag: "Absent" }
