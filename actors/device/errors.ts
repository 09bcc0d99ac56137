/** Rejections of the device actor. The token route states them as RFC 8628 errors; the approve
 * and deny capabilities through the gateway's error table. */
import { Schema } from "effect"

export class DeviceAlreadyExists extends Schema.TaggedError<DeviceAlreadyExists>()("DeviceAlreadyExists", {
  deviceId: Schema.String
}) {
  override get message() {
    return `device login ${this.deviceId} already exists`
  }
}

export class DeviceNotFound extends Schema.TaggedError<DeviceNotFound>()("DeviceNotFound", {
  deviceId: Schema.String
}) {
  override get message() {
    return `no device login ${this.deviceId}`
  }
}

/** The code's ten minutes are up: it can be neither approved, denied nor redeemed. */
export class DeviceCodeExpired extends Schema.TaggedError<DeviceCodeExpired>()("DeviceCodeExpired", {
  deviceId: Schema.String,
  expiresAt: Schema.String
}) {
  override get message() {
    return `the device code expired at ${this.expiresAt}; start the CLI login again`
  }
}

/** Redeemed before anyone approved it (RFC 8628 `authorization_pending`). */
export class DevicePending extends Schema.TaggedError<DevicePending>()("DevicePending", {
  deviceId: Schema.String
}) {
  override get message() {
    return `device login ${this.deviceId} is not approved yet`
  }
}

export class DeviceDenied extends Schema.TaggedError<DeviceDenied>()("DeviceDenied", {
  deviceId: Schema.String
}) {
  override get message() {
    return `device login ${this.deviceId} was denied`
  }
}

/** Approved by another person, or for another place, or denied after approval. */
export class DeviceAlreadyApproved extends Schema.TaggedError<DeviceAlreadyApproved>()("DeviceAlreadyApproved", {
  deviceId: Schema.String
}) {
  override get message() {
    return `device login ${this.deviceId} has already been approved`
  }
}

/** Its credential has been collected: a device code is good for one credential. */
export class DeviceAlreadyRedeemed extends Schema.TaggedError<DeviceAlreadyRedeemed>()("DeviceAlreadyRedeemed", {
  deviceId: Schema.String
}) {
  override get message() {
    return `device login ${this.deviceId} has already been used`
  }
}

export const DeviceError = Schema.Union(
  DeviceAlreadyExists,
  DeviceNotFound,
  DeviceCodeExpired,
  DevicePending,
  DeviceDenied,
  DeviceAlreadyApproved,
  DeviceAlreadyRedeemed
)
export type DeviceError = typeof DeviceError.Type
