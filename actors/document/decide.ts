import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { DocumentAlreadyExists, type DocumentError, DocumentNotFound } from "./errors.ts"
import { DocumentCreated, type DocumentEvent, DocumentRevised } from "./events.ts"
import type { DocumentCommand } from "./protocol.ts"
import type { DocumentState } from "./state.ts"

export const decide = (state: DocumentState, command: DocumentCommand, meta: CommandMeta): Either.Either<ReadonlyArray<DocumentEvent>, DocumentError> => {
  switch (command._tag) {
    case "CreateDocument": {
      if (state._tag !== "Absent") return Either.left(new DocumentAlreadyExists({ documentId: command.documentId }))
      const { _tag, ...fields } = command
      return Either.right([new DocumentCreated({ ...fields, createdAt: meta.at })])
    }
    case "ReviseDocument": {
      if (state._tag === "Absent") return Either.left(new DocumentNotFound({ documentId: command.documentId }))
      // the same text again is no new version
      if (state.title === command.title && state.content === command.content) return Either.right([])
      const { _tag, ...fields } = command
      return Either.right([new DocumentRevised({ ...fields, version: state.version + 1, revisedAt: meta.at })])
    }
  }
}
