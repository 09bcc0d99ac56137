/** An enrolled machine, key `machine:<machineId>`: what its host key records (spec 5 rule 8). */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { MachineError } from "./errors.ts"
import { MachineEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { MachineCommand } from "./protocol.ts"
import { initialState, MachineState } from "./state.ts"

export const MachineActor: ActorKind<MachineState, MachineCommand, MachineEvent, MachineError> = {
  kind: "machine",
  initialState,
  state: MachineState,
  commands: MachineCommand,
  events: MachineEvent,
  errors: MachineError,
  decide,
  evolve,
  project
}
