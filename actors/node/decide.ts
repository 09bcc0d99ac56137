import { Either, Option, Predicate, Record } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { own, type Properties, type PropertiesInput } from "../schema/definition.ts"
import { validateProperties } from "../schema/properties.ts"
import { NodeAlreadyExists, type NodeError, NodeNotFound } from "./errors.ts"
import { NodeCreated, NodeDeleted, type NodeEvent, NodeUpdated } from "./events.ts"
import type { CreateNode, NodeCommand, UpdateNode } from "./protocol.ts"
import { applyChanges } from "./evolve.ts"
import type { LiveNode, NodeState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<NodeEvent>, NodeError>

/** The live node the command may act on; a node of another workspace is reported as not found. */
const liveNode = (
  state: NodeState,
  command: { readonly nodeId: string; readonly workspaceId: string }
): Either.Either<LiveNode, NodeNotFound> =>
  state._tag === "live" && state.workspaceId === command.workspaceId
    ? Either.right(state)
    : Either.left(new NodeNotFound({ nodeId: command.nodeId, workspaceId: command.workspaceId }))

/** The values that are set: `null` on create means "not set". */
const setValues = (properties: PropertiesInput): Properties => Record.filter(properties, Predicate.isNotNull)

/** Only the properties whose value differs from the node's, with the value they had. */
const changesOf = (node: LiveNode, patch: PropertiesInput): NodeUpdated["changes"] =>
  Record.filterMap(patch, (to, property) => {
    const from = own(node.properties, property) ?? null
    return from === to ? Option.none() : Option.some({ from, to })
  })

const create = (state: NodeState, command: CreateNode, meta: CommandMeta): Decision => {
  if (state._tag !== "absent") return Either.left(new NodeAlreadyExists({ nodeId: command.nodeId }))
  const { nodeId, workspaceId, label } = command
  return validateProperties(command.definition, command.properties, "create").pipe(
    Either.map(() => [
      new NodeCreated({ nodeId, workspaceId, label, properties: setValues(command.properties), at: meta.at })
    ])
  )
}

const update = (state: NodeState, command: UpdateNode, meta: CommandMeta): Decision =>
  Either.gen(function* () {
    const node = yield* liveNode(state, command)
    yield* validateProperties(command.definition, command.properties, "update")
    const changes = changesOf(node, command.properties)
    if (Record.isEmptyRecord(changes)) return []
    const { nodeId, workspaceId, label } = node
    return [new NodeUpdated({ nodeId, workspaceId, label, changes, properties: applyChanges(node.properties, changes), at: meta.at })]
  })

export const decide = (state: NodeState, command: NodeCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "CreateNode":
      return create(state, command, meta)
    case "UpdateNode":
      return update(state, command, meta)
    case "DeleteNode":
      return liveNode(state, command).pipe(
        Either.map(({ nodeId, workspaceId, label, properties }) => [
          new NodeDeleted({ nodeId, workspaceId, label, properties })
        ])
      )
  }
}
