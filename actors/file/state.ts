/** A file is absent until its upload is recorded; it does not change after. */
import { Schema } from "effect"
import { FileUploaded } from "./events.ts"

const { _tag, ...uploaded } = FileUploaded.fields

export const FileState = Schema.Union(Schema.TaggedStruct("Absent", {}), Schema.TaggedStruct("Uploaded", uploaded))
export type FileState = typeof FileState.Type

export const initialFileState: FileState = { _tag: "Absent" }
