/**
 * One batch of operational telemetry sent with a telemetry key (spec 5 rule 8), key
 * `telemetry:<batchId>`, always seq 1. The capability appends it directly: a fresh batch id has no
 * other writer, so no owner needs to decide anything (the audit records' reasoning).
 */
import { Schema } from "effect"

export const TelemetryPoint = Schema.Struct({
  name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200)),
  value: Schema.Number.pipe(Schema.finite()),
  unit: Schema.optional(Schema.String.pipe(Schema.maxLength(32))),
  /** When it was measured (ISO 8601), if the sender says. */
  at: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
  attributes: Schema.optional(Schema.Record({ key: Schema.String.pipe(Schema.maxLength(100)), value: Schema.String.pipe(Schema.maxLength(500)) }))
})
export type TelemetryPoint = typeof TelemetryPoint.Type

export class TelemetryIngested extends Schema.TaggedClass<TelemetryIngested>()("telemetry.ingested", {
  batchId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  /** The workspace the call named. */
  workspaceId: Schema.NullOr(Schema.NonEmptyString),
  /** The telemetry key that sent it. */
  keyId: Schema.NonEmptyString,
  points: Schema.Array(TelemetryPoint),
  at: Schema.String
}) {}
