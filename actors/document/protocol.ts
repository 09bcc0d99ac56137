/** Commands of the document actor; time comes from the command's metadata. */
import { Schema, Struct } from "effect"
import { DocumentCreated, DocumentRevised } from "./events.ts"

export class CreateDocument extends Schema.TaggedClass<CreateDocument>()("CreateDocument", Struct.omit(DocumentCreated.fields, "_tag", "createdAt")) {}

/** The version is the actor's to number. */
export class ReviseDocument extends Schema.TaggedClass<ReviseDocument>()("ReviseDocument", Struct.omit(DocumentRevised.fields, "_tag", "version", "revisedAt")) {}

export const DocumentCommand = Schema.Union(CreateDocument, ReviseDocument)
export type DocumentCommand = typeof DocumentCommand.Type
