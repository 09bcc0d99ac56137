/** Rejections of a fleet command. */
import { Schema } from "effect"

/** 409 `conflict`, reason `policy_version_mismatch`: the bundle changed since the caller read it. */
export class PolicyVersionMismatch extends Schema.TaggedError<PolicyVersionMismatch>()("PolicyVersionMismatch", {
  expectedVersion: Schema.Int,
  currentVersion: Schema.Int
}) {
  override get message() {
    return `the policy bundle is at version ${this.currentVersion}, not ${this.expectedVersion}`
  }
}

export const FleetError = PolicyVersionMismatch
export type FleetError = typeof FleetError.Type
