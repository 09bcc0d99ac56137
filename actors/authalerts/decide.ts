import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { NoAlertRoles } from "./errors.ts"
import { McpAuthAlertsSet, type McpAuthAlertsEvent } from "./events.ts"
import type { McpAuthAlertsCommand } from "./protocol.ts"
import type { McpAuthAlertsState } from "./state.ts"

/** The roles once each, in a fixed order, so that setting the same roles again records nothing. */
const ROLE_ORDER = ["Owner", "Admin", "Member", "Viewer"] as const

export const decide = (state: McpAuthAlertsState, command: McpAuthAlertsCommand, meta: CommandMeta): Either.Either<ReadonlyArray<McpAuthAlertsEvent>, NoAlertRoles> => {
  if (command.roles.length === 0) return Either.left(new NoAlertRoles())
  const roles = ROLE_ORDER.filter((role) => command.roles.includes(role))
  const unchanged = state._tag === "Set" && state.sendEmail === command.sendEmail && state.roles.join() === roles.join()
  return Either.right(unchanged ? [] : [new McpAuthAlertsSet({ orgId: command.orgId, sendEmail: command.sendEmail, roles, at: meta.at })])
}
