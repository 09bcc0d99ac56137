/** The organization actor, key `org:<orgId>`: the organization, its workspaces and memberships. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { OrgError } from "./errors.ts"
import { OrgEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { OrgCommand } from "./protocol.ts"
import { initialOrgState, OrgState } from "./state.ts"

export const OrgActor: ActorKind<OrgState, OrgCommand, OrgEvent, OrgError> = {
  kind: "org",
  initialState: initialOrgState,
  state: OrgState,
  commands: OrgCommand,
  events: OrgEvent,
  errors: OrgError,
  decide,
  evolve,
  project
}
