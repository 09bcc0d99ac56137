/** Commands of the file actor. The application checks the upload's rules on the bytes and stores
 * them before it sends the command (commands cross the commands topic, bytes must not); time comes
 * from the command's metadata. */
import { Schema, Struct } from "effect"
import { FileUploaded } from "./events.ts"

export class UploadFile extends Schema.TaggedClass<UploadFile>()("UploadFile", Struct.omit(FileUploaded.fields, "_tag", "uploadedAt")) {}

export const FileCommand = Schema.Union(UploadFile)
export type FileCommand = typeof FileCommand.Type
