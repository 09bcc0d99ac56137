import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import {
  DeviceAlreadyApproved,
  DeviceAlreadyExists,
  DeviceAlreadyRedeemed,
  DeviceCodeExpired,
  DeviceDenied as Denied,
  type DeviceError,
  DeviceNotFound,
  DevicePending
} from "./errors.ts"
import { DeviceApproved, DeviceDenied, type DeviceEvent, DeviceRedeemed, DeviceRequested } from "./events.ts"
import type { ApproveDevice, DenyDevice, DeviceCommand, RedeemDevice } from "./protocol.ts"
import type { DeviceState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<DeviceEvent>, DeviceError>

const nothing: Decision = Either.right([])

/** Approval, denial and redemption end when the code expires; the first decision made stands after. */
const expired = (state: Exclude<DeviceState, { readonly _tag: "Absent" }>, meta: CommandMeta) =>
  Date.parse(meta.at) >= Date.parse(state.expiresAt)

export const decide = (state: DeviceState, command: DeviceCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "RequestDevice": {
      if (state._tag !== "Absent") return Either.left(new DeviceAlreadyExists({ deviceId: command.deviceId }))
      const { _tag, ...fields } = command
      return Either.right([new DeviceRequested({ ...fields, requestedAt: meta.at })])
    }
    case "ApproveDevice":
      return approve(state, command, meta)
    case "DenyDevice":
      return deny(state, command, meta)
    case "RedeemDevice":
      return redeem(state, command, meta)
  }
}

const approve = (state: DeviceState, command: ApproveDevice, meta: CommandMeta): Decision => {
  const { deviceId } = command
  if (state._tag === "Absent") return Either.left(new DeviceNotFound({ deviceId }))
  if (state._tag === "Approved" || state._tag === "Redeemed") {
    // the same person approving the same place again (a second click, a retry) changes nothing
    const same = state.userId === command.userId && state.orgId === command.orgId && state.workspaceId === command.workspaceId
    if (same) return nothing
    return Either.left(state._tag === "Redeemed" ? new DeviceAlreadyRedeemed({ deviceId }) : new DeviceAlreadyApproved({ deviceId }))
  }
  if (state._tag === "Denied") return Either.left(new Denied({ deviceId }))
  if (expired(state, meta)) return Either.left(new DeviceCodeExpired({ deviceId, expiresAt: state.expiresAt }))
  const { _tag, ...fields } = command
  return Either.right([new DeviceApproved({ ...fields, approvedAt: meta.at })])
}

const deny = (state: DeviceState, command: DenyDevice, meta: CommandMeta): Decision => {
  const { deviceId } = command
  switch (state._tag) {
    case "Absent":
      return Either.left(new DeviceNotFound({ deviceId }))
    case "Denied":
      // denying twice records one denial
      return nothing
    case "Approved":
      return Either.left(new DeviceAlreadyApproved({ deviceId }))
    case "Redeemed":
      return Either.left(new DeviceAlreadyRedeemed({ deviceId }))
    case "Pending":
      if (expired(state, meta)) return Either.left(new DeviceCodeExpired({ deviceId, expiresAt: state.expiresAt }))
      return Either.right([new DeviceDenied({ deviceId, userId: command.userId, deniedAt: meta.at })])
  }
}

const redeem = (state: DeviceState, command: RedeemDevice, meta: CommandMeta): Decision => {
  const { deviceId } = command
  switch (state._tag) {
    case "Absent":
      return Either.left(new DeviceNotFound({ deviceId }))
    case "Redeemed":
      return Either.left(new DeviceAlreadyRedeemed({ deviceId }))
    case "Denied":
      return Either.left(new Denied({ deviceId }))
    case "Pending":
    case "Approved":
      if (expired(state, meta)) return Either.left(new DeviceCodeExpired({ deviceId, expiresAt: state.expiresAt }))
      if (state._tag === "Pending") return Either.left(new DevicePending({ deviceId }))
      return Either.right([new DeviceRedeemed({ deviceId, keyId: command.keyId, redeemedAt: meta.at })])
  }
}
