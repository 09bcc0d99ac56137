/** The file actor, key `file:<fileId>`: one uploaded attachment (docs/chat.md, attachments). */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { FileError } from "./errors.ts"
import { FileEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { FileCommand } from "./protocol.ts"
import { FileState, initialFileState } from "./state.ts"

export const FileActor: ActorKind<FileState, FileCommand, FileEvent, FileError> = {
  kind: "file",
  initialState: initialFileState,
  state: FileState,
  commands: FileCommand,
  events: FileEvent,
  errors: FileError,
  decide,
  evolve,
  project
}
