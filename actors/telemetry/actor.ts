/** The telemetry actor, key `telemetry:<batchId>`: one batch per key, appended directly by the
 * capability that receives it. Like the audit actor, it takes no commands and keeps no state. */
import { Either, Schema } from "effect"
import type { ActorKind } from "../kernel.ts"
import { TelemetryCommandRefused } from "./errors.ts"
import { TelemetryIngested } from "./events.ts"
import { project } from "./project.ts"

// No value decodes as this, so no command reaches the telemetry actor over the wire.
const NoCommand = Schema.Struct({ _tag: Schema.Never })

export const TelemetryActor: ActorKind<null, typeof NoCommand.Type, TelemetryIngested, TelemetryCommandRefused> = {
  kind: "telemetry",
  initialState: null,
  state: Schema.Null,
  commands: NoCommand,
  events: TelemetryIngested,
  errors: TelemetryCommandRefused,
  decide: () => Either.left(new TelemetryCommandRefused()),
  evolve: () => null,
  project,
  stateless: true
}
