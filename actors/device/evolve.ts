import type { DeviceEvent } from "./events.ts"
import type { DeviceState } from "./state.ts"

// The decider allows each transition only from the state named; a log that says otherwise is corrupt.
export const evolve = (state: DeviceState, event: DeviceEvent): DeviceState => {
  switch (event._tag) {
    case "device.requested": {
      const { _tag, ...fields } = event
      return { _tag: "Pending", ...fields }
    }
    case "device.approved": {
      if (state._tag !== "Pending") throw new Error(`device.approved for device ${event.deviceId} in state ${state._tag}`)
      const { _tag, deviceId: _id, ...approval } = event
      return { ...state, ...approval, _tag: "Approved" }
    }
    case "device.denied": {
      if (state._tag !== "Pending") throw new Error(`device.denied for device ${event.deviceId} in state ${state._tag}`)
      return { ...state, _tag: "Denied", userId: event.userId, deniedAt: event.deniedAt }
    }
    case "device.redeemed": {
      if (state._tag !== "Approved") throw new Error(`device.redeemed for device ${event.deviceId} in state ${state._tag}`)
      return { ...state, _tag: "Redeemed", keyId: event.keyId, redeemedAt: event.redeemedAt }
    }
  }
}
