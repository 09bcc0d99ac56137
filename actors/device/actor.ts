/** The device actor, key `device:<deviceId>`: one CLI device login (RFC 8628 style). */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { DeviceError } from "./errors.ts"
import { DeviceEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { DeviceCommand } from "./protocol.ts"
import { DeviceState, initialDeviceState } from "./state.ts"

export const DeviceActor: ActorKind<DeviceState, DeviceCommand, DeviceEvent, DeviceError> = {
  kind: "device",
  initialState: initialDeviceState,
  state: DeviceState,
  commands: DeviceCommand,
  events: DeviceEvent,
  errors: DeviceError,
  decide,
  evolve,
  project
}
