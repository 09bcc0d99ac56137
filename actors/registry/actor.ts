/** A registry of MCP servers, key `registry:<registryId>` (`mreg_<32 hex>`): its address, and the
 * one sync of it that may run at a time across the cluster (the lease), with the checkpoint a
 * pass leaves (spec 2.9, 6.3.3). The catalog it syncs is projected from its pages. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { RegistryError } from "./errors.ts"
import { RegistryEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { RegistryCommand } from "./protocol.ts"
import { initialRegistryState, RegistryState } from "./state.ts"

export const RegistryActor: ActorKind<RegistryState, RegistryCommand, RegistryEvent, RegistryError> = {
  kind: "registry",
  initialState: initialRegistryState,
  state: RegistryState,
  commands: RegistryCommand,
  events: RegistryEvent,
  errors: RegistryError,
  decide,
  evolve,
  project
}
