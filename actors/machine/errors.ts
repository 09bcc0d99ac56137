/** Rejections of a machine command. */
import { Schema } from "effect"

/**
 * 403 `forbidden`, reason `machine_enrolled_elsewhere`: the machine is enrolled in another
 * workspace (or organization) than the key that speaks for it; a machine belongs to one workspace.
 */
export class MachineEnrolledElsewhere extends Schema.TaggedError<MachineEnrolledElsewhere>()("MachineEnrolledElsewhere", {
  machineId: Schema.String,
  workspaceId: Schema.String
}) {
  override get message() {
    return `machine ${this.machineId} is not enrolled in workspace ${this.workspaceId}`
  }
}

export const MachineError = MachineEnrolledElsewhere
export type MachineError = typeof MachineError.Type
