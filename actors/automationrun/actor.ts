/** One run of an automation, key `automation_run:<runId>` (`arn_<32 hex>`, derived from what fired
 * it): a durable process whose every step's start and end is an event, so that another node resumes
 * it after the last finished step. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { AutomationRunError } from "./errors.ts"
import { AutomationRunEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { AutomationRunCommand } from "./protocol.ts"
import { AutomationRunState, initialRunState } from "./state.ts"

export const AutomationRunActor: ActorKind<AutomationRunState, AutomationRunCommand, AutomationRunEvent, AutomationRunError> = {
  kind: "automation_run",
  initialState: initialRunState,
  state: AutomationRunState,
  commands: AutomationRunCommand,
  events: AutomationRunEvent,
  errors: AutomationRunError,
  decide,
  evolve,
  project
}
