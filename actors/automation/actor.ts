/** An automation, key `automation:<automationId>` (`aut_<32 hex>`): a playbook and its trigger,
 * and the gate every run of it passes before it starts (spec 2.8, 3.4). */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { AutomationError } from "./errors.ts"
import { AutomationEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { AutomationCommand } from "./protocol.ts"
import { AutomationState, initialAutomationState } from "./state.ts"

export const AutomationActor: ActorKind<AutomationState, AutomationCommand, AutomationEvent, AutomationError> = {
  kind: "automation",
  initialState: initialAutomationState,
  state: AutomationState,
  commands: AutomationCommand,
  events: AutomationEvent,
  errors: AutomationError,
  decide,
  evolve,
  project
}
