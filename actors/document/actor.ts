/** The document actor, key `document:<documentId>`: one workspace document (Markdown, title, versions). */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { DocumentError } from "./errors.ts"
import { DocumentEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { DocumentCommand } from "./protocol.ts"
import { DocumentState, initialDocumentState } from "./state.ts"

export const DocumentActor: ActorKind<DocumentState, DocumentCommand, DocumentEvent, DocumentError> = {
  kind: "document",
  initialState: initialDocumentState,
  state: DocumentState,
  commands: DocumentCommand,
  events: DocumentEvent,
  errors: DocumentError,
  decide,
  evolve,
  project
}
