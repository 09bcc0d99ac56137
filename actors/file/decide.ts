import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { FileAlreadyExists, type FileError } from "./errors.ts"
import { type FileEvent, FileUploaded } from "./events.ts"
import type { FileCommand } from "./protocol.ts"
import type { FileState } from "./state.ts"

export const decide = (state: FileState, command: FileCommand, meta: CommandMeta): Either.Either<ReadonlyArray<FileEvent>, FileError> => {
  switch (command._tag) {
    case "UploadFile": {
      if (state._tag !== "Absent") return Either.left(new FileAlreadyExists({ fileId: command.fileId }))
      const { _tag, ...fields } = command
      return Either.right([new FileUploaded({ ...fields, uploadedAt: meta.at })])
    }
  }
}
