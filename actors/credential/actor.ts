/** A plugin credential (spec 2.9, 3.5, 5.11), key `credential:<credentialId>` (`mcrd_<32 hex>`, a
 * digest of the workspace and the listing: unique on (workspace_id, org_listing_id)). */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { CredentialError } from "./errors.ts"
import { CredentialEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { CredentialCommand } from "./protocol.ts"
import { CredentialState, initialCredentialState } from "./state.ts"

export const CredentialActor: ActorKind<CredentialState, CredentialCommand, CredentialEvent, CredentialError> = {
  kind: "credential",
  initialState: initialCredentialState,
  state: CredentialState,
  commands: CredentialCommand,
  events: CredentialEvent,
  errors: CredentialError,
  decide,
  evolve,
  project
}
