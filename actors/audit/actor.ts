/** The audit actor, key `audit:<invocationId>`: one record per capability invocation or failed sign-in. It accepts no
 * commands and keeps no state; it exists so that audit records live on the log like every other
 * fact and are projected (and replayed) by the same runner. */
import { Either, Schema } from "effect"
import type { ActorKind } from "../kernel.ts"
import { AuditCommandRefused } from "./errors.ts"
import { AuditEvent } from "./events.ts"
import { project } from "./project.ts"

// No value decodes as this (its tag would have to be `never`), so no command reaches the audit
// actor over the wire. `Schema.Never` itself does not fit the kernel's `Schema<C, any>`.
const NoCommand = Schema.Struct({ _tag: Schema.Never })

export const AuditActor: ActorKind<null, typeof NoCommand.Type, AuditEvent, AuditCommandRefused> = {
  kind: "audit",
  initialState: null,
  state: Schema.Null,
  commands: NoCommand,
  events: AuditEvent,
  errors: AuditCommandRefused,
  decide: () => Either.left(new AuditCommandRefused()),
  evolve: () => null,
  project,
  stateless: true
}
