import type { McpAuthAlertsEvent } from "./events.ts"
import type { McpAuthAlertsState } from "./state.ts"

export const evolve = (_state: McpAuthAlertsState, event: McpAuthAlertsEvent): McpAuthAlertsState => ({
  _tag: "Set",
  orgId: event.orgId,
  sendEmail: event.sendEmail,
  roles: event.roles,
  updatedAt: event.at
})
