/** An organization's `mcp_auth_alerts` setting (spec 2.9), key `mcp_auth_alerts:<orgId>`: who hears
 * of a plugin credential needing re-authentication, and whether by email too. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { McpAuthAlertsError } from "./errors.ts"
import { McpAuthAlertsEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { McpAuthAlertsCommand } from "./protocol.ts"
import { initialMcpAuthAlertsState, McpAuthAlertsState } from "./state.ts"

export const McpAuthAlertsActor: ActorKind<McpAuthAlertsState, McpAuthAlertsCommand, McpAuthAlertsEvent, McpAuthAlertsError> = {
  kind: "mcp_auth_alerts",
  initialState: initialMcpAuthAlertsState,
  state: McpAuthAlertsState,
  commands: McpAuthAlertsCommand,
  events: McpAuthAlertsEvent,
  errors: McpAuthAlertsError,
  decide,
  evolve,
  project
}
