import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { type FleetError, PolicyVersionMismatch } from "./errors.ts"
import { type FleetEvent, PolicySet, RepositoryRegistered, RepositoryRemoved } from "./events.ts"
import type { FleetCommand } from "./protocol.ts"
import type { FleetState } from "./state.ts"

export const decide = (state: FleetState, command: FleetCommand, meta: CommandMeta): Either.Either<ReadonlyArray<FleetEvent>, FleetError> => {
  const { orgId, workspaceId } = command
  switch (command._tag) {
    case "SetPolicy": {
      const { expectedVersion, rules } = command
      if (expectedVersion !== null && expectedVersion !== state.policyVersion) {
        return Either.left(new PolicyVersionMismatch({ expectedVersion, currentVersion: state.policyVersion }))
      }
      return Either.right([new PolicySet({ orgId, workspaceId, version: state.policyVersion + 1, rules, at: meta.at })])
    }
    case "RegisterRepository":
      // registering a registered repository changes nothing
      return Either.right(state.repositories.includes(command.repository) ? [] : [new RepositoryRegistered({ orgId, workspaceId, repository: command.repository, at: meta.at })])
    case "RemoveRepository":
      // removing one not registered changes nothing
      return Either.right(state.repositories.includes(command.repository) ? [new RepositoryRemoved({ orgId, workspaceId, repository: command.repository, at: meta.at })] : [])
  }
}
