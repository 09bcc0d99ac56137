/** Commands of the device actor. The application mints the device code and the user code, checks
 * who may approve (the checkpoint, and a browser session only), and issues the key; time comes
 * from the command's metadata. */
import { Schema, Struct } from "effect"
import { DeviceApproved, DeviceRequested } from "./events.ts"

export class RequestDevice extends Schema.TaggedClass<RequestDevice>()(
  "RequestDevice",
  Struct.omit(DeviceRequested.fields, "_tag", "requestedAt")
) {}

export class ApproveDevice extends Schema.TaggedClass<ApproveDevice>()(
  "ApproveDevice",
  Struct.omit(DeviceApproved.fields, "_tag", "approvedAt")
) {}

export class DenyDevice extends Schema.TaggedClass<DenyDevice>()("DenyDevice", {
  deviceId: Schema.NonEmptyString,
  userId: Schema.NonEmptyString
}) {}

/** The first successful poll: `keyId` is the CLI login key just issued for the approver. */
export class RedeemDevice extends Schema.TaggedClass<RedeemDevice>()("RedeemDevice", {
  deviceId: Schema.NonEmptyString,
  keyId: Schema.NonEmptyString
}) {}

export const DeviceCommand = Schema.Union(RequestDevice, ApproveDevice, DenyDevice, RedeemDevice)
export type DeviceCommand = typeof DeviceCommand.Type
