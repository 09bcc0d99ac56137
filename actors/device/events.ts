/**
 * Events of the device actor (key `device:<deviceId>`): one CLI device login (RFC 8628 style). The
 * device code's raw value never appears here: only its lookup id and hash. Each event repeats the
 * command's time, because `evolve` sees only the event. A published `_tag` is never renamed.
 */
import { Schema } from "effect"

/** A CLI asked to be signed in: it shows the user code and polls with the device code. */
export class DeviceRequested extends Schema.TaggedClass<DeviceRequested>()("device.requested", {
  deviceId: Schema.NonEmptyString,
  /** What the person types on the device page, `XXXX-XXXX`. */
  userCode: Schema.NonEmptyString,
  /** The device code's non-secret prefix, stored in clear for the index lookup. */
  deviceLookup: Schema.NonEmptyString,
  deviceSecretHash: Schema.NonEmptyString,
  /** What the CLI calls itself; shown to the approver and in the key's name. */
  clientName: Schema.NonEmptyTrimmedString,
  /** ISO 8601. */
  requestedAt: Schema.String,
  /** ISO 8601: approval, denial and redemption are refused from this time on. */
  expiresAt: Schema.String
}) {}

/** A signed-in person approved the login, for this organization and (unless organization-level) workspace. */
export class DeviceApproved extends Schema.TaggedClass<DeviceApproved>()("device.approved", {
  deviceId: Schema.NonEmptyString,
  userId: Schema.NonEmptyString,
  orgId: Schema.NonEmptyString,
  /** Null for an organization-level CLI login. */
  workspaceId: Schema.NullOr(Schema.NonEmptyString),
  approvedAt: Schema.String
}) {}

export class DeviceDenied extends Schema.TaggedClass<DeviceDenied>()("device.denied", {
  deviceId: Schema.NonEmptyString,
  userId: Schema.NonEmptyString,
  deniedAt: Schema.String
}) {}

/** The CLI collected its credential: the `cli_session_v1` key `keyId`. The raw key is never recorded. */
export class DeviceRedeemed extends Schema.TaggedClass<DeviceRedeemed>()("device.redeemed", {
  deviceId: Schema.NonEmptyString,
  keyId: Schema.NonEmptyString,
  redeemedAt: Schema.String
}) {}

export const DeviceEvent = Schema.Union(DeviceRequested, DeviceApproved, DeviceDenied, DeviceRedeemed)
export type DeviceEvent = typeof DeviceEvent.Type
