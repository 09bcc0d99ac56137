/** The API key actor, key `apikey:<keyId>`: one bearer key's lifecycle. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { ApiKeyError } from "./errors.ts"
import { ApiKeyEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { ApiKeyCommand } from "./protocol.ts"
import { ApiKeyState, initialApiKeyState } from "./state.ts"

export const ApiKeyActor: ActorKind<ApiKeyState, ApiKeyCommand, ApiKeyEvent, ApiKeyError> = {
  kind: "apikey",
  initialState: initialApiKeyState,
  state: ApiKeyState,
  commands: ApiKeyCommand,
  events: ApiKeyEvent,
  errors: ApiKeyError,
  decide,
  evolve,
  project
}
