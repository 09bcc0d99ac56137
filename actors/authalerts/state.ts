/** Unset (the defaults apply) or set. */
import { Schema } from "effect"
import { mcpAuthAlertsFields } from "./events.ts"

export const McpAuthAlertsState = Schema.Union(
  Schema.TaggedStruct("Unset", {}),
  Schema.TaggedStruct("Set", { ...mcpAuthAlertsFields, updatedAt: Schema.String })
)
export type McpAuthAlertsState = typeof McpAuthAlertsState.Type

export const initialMcpAuthAlertsState: McpAuthAlertsState = { _tag: "Unset" }
