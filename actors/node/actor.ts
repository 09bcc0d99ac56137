/** A workspace node: key `node:<nodeId>`, values checked against its label's definition. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { NodeError } from "./errors.ts"
import { NodeEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { NodeCommand } from "./protocol.ts"
import { initialState, NodeState } from "./state.ts"

export const NodeActor: ActorKind<NodeState, NodeCommand, NodeEvent, NodeError> = {
  kind: "node",
  initialState,
  state: NodeState,
  commands: NodeCommand,
  events: NodeEvent,
  errors: NodeError,
  decide,
  evolve,
  project
}
