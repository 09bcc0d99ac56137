/** The schema registry of a workspace: key `schema:<workspaceId>`, owns its label definitions. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { SchemaError } from "./errors.ts"
import { SchemaEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { SchemaCommand } from "./protocol.ts"
import { initialState, SchemaState } from "./state.ts"

export const SchemaActor: ActorKind<SchemaState, SchemaCommand, SchemaEvent, SchemaError> = {
  kind: "schema",
  initialState,
  state: SchemaState,
  commands: SchemaCommand,
  events: SchemaEvent,
  errors: SchemaError,
  decide,
  evolve,
  project
}
