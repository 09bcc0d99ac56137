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

/** 404 `not_found`, reason `machine_not_found`: no machine of this id is enrolled in the workspace. */
export class MachineNotEnrolled extends Schema.TaggedError<MachineNotEnrolled>()("MachineNotEnrolled", {
  machineId: Schema.String
}) {
  override get message() {
    return `no machine ${this.machineId} is enrolled in this workspace`
  }
}

/** 404 `not_found`, reason `command_not_found`: the machine has no queued command of this id
 * (never queued, or already acknowledged). */
export class CommandNotPending extends Schema.TaggedError<CommandNotPending>()("CommandNotPending", {
  machineId: Schema.String,
  commandId: Schema.String
}) {
  override get message() {
    return `machine ${this.machineId} has no queued command ${this.commandId}`
  }
}

export const MachineError = Schema.Union(MachineEnrolledElsewhere, MachineNotEnrolled, CommandNotPending)
export type MachineError = typeof MachineError.Type
