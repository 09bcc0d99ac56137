/** A device login is absent, then pending; a person approves or denies it; an approved one is
 * redeemed once. Every present state holds the request, so each event can project the full row. */
import { Schema } from "effect"
import { DeviceApproved, DeviceRequested } from "./events.ts"

const { _tag, ...requested } = DeviceRequested.fields
const { _tag: _approvedTag, deviceId: _deviceId, ...approval } = DeviceApproved.fields

export const DeviceState = Schema.Union(
  Schema.TaggedStruct("Absent", {}),
  Schema.TaggedStruct("Pending", requested),
  Schema.TaggedStruct("Approved", { ...requested, ...approval }),
  Schema.TaggedStruct("Denied", { ...requested, userId: Schema.NonEmptyString, deniedAt: Schema.String }),
  Schema.TaggedStruct("Redeemed", { ...requested, ...approval, keyId: Schema.NonEmptyString, redeemedAt: Schema.String })
)
export type DeviceState = typeof DeviceState.Type

export const initialDeviceState: DeviceState = { _tag: "Absent" }

export const statusOf = (state: DeviceState): "absent" | "pending" | "approved" | "denied" | "redeemed" =>
  state._tag === "Absent" ? "absent" : state._tag === "Pending" ? "pending" : state._tag === "Approved" ? "approved" : state._tag === "Denied" ? "denied" : "redeemed"
