/** The A2A task actor, key `a2atask:<taskId>` (`a2a_<32 hex>`): one A2A v0.3 task, the durable
 * handle of a workspace-assistant turn asked over the JSON-RPC endpoint (docs/a2a.md). */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { A2aTaskError } from "./errors.ts"
import { A2aTaskEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { A2aTaskCommand } from "./protocol.ts"
import { A2aTaskState, initialA2aTaskState } from "./state.ts"

export const A2aTaskActor: ActorKind<A2aTaskState, A2aTaskCommand, A2aTaskEvent, A2aTaskError> = {
  kind: "a2atask",
  initialState: initialA2aTaskState,
  state: A2aTaskState,
  commands: A2aTaskCommand,
  events: A2aTaskEvent,
  errors: A2aTaskError,
  decide,
  evolve,
  project
}
