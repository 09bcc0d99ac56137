/** The audit actor's only rejection. */
import { Schema } from "effect"

/** Audit records are facts the checkpoint observed; nothing may ask for one to be written. */
export class AuditCommandRefused extends Schema.TaggedError<AuditCommandRefused>()("AuditCommandRefused", {}) {
  override get message() {
    return "audit records are written by the capability checkpoint, not by commands"
  }
}
