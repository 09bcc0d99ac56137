/** Commands of the alert setting; the capability checks that the caller is an Owner. */
import { Schema } from "effect"
import { mcpAuthAlertsFields } from "./events.ts"

export class SetMcpAuthAlerts extends Schema.TaggedClass<SetMcpAuthAlerts>()("SetMcpAuthAlerts", mcpAuthAlertsFields) {}

export const McpAuthAlertsCommand = Schema.Union(SetMcpAuthAlerts)
export type McpAuthAlertsCommand = typeof McpAuthAlertsCommand.Type
