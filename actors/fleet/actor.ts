/** A workspace's fleet, key `fleet:<workspaceId>`: what Owners and workspace Admins set for the
 * workspace's enrolled machines (policy bundle, repositories), which their host keys read. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { FleetError } from "./errors.ts"
import { FleetEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { FleetCommand } from "./protocol.ts"
import { FleetState, initialState } from "./state.ts"

export const FleetActor: ActorKind<FleetState, FleetCommand, FleetEvent, FleetError> = {
  kind: "fleet",
  initialState,
  state: FleetState,
  commands: FleetCommand,
  events: FleetEvent,
  errors: FleetError,
  decide,
  evolve,
  project
}
