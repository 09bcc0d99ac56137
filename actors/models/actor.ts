/** The models actor, key `models:<orgId>`: an organization's text model tiers, default tier and provider keys. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { ModelsError } from "./errors.ts"
import { ModelsEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { ModelsCommand } from "./protocol.ts"
import { initialModelsState, ModelsState } from "./state.ts"

export const ModelsActor: ActorKind<ModelsState, ModelsCommand, ModelsEvent, ModelsError> = {
  kind: "models",
  initialState: initialModelsState,
  state: ModelsState,
  commands: ModelsCommand,
  events: ModelsEvent,
  errors: ModelsError,
  decide,
  evolve,
  project
}
