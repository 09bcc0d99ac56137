/** The telemetry actor's only rejection. */
import { Schema } from "effect"

/** Telemetry batches are appended by `telemetry.ingest`, not decided from commands. */
export class TelemetryCommandRefused extends Schema.TaggedError<TelemetryCommandRefused>()("TelemetryCommandRefused", {}) {
  override get message() {
    return "telemetry batches are appended by telemetry.ingest, not by commands"
  }
}
