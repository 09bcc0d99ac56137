/** Rejections of a node command, with the HTTP status, code and reason each maps to. */
import { Schema } from "effect"
import { PropertyError } from "../schema/errors.ts"

/**
 * 404 `not_found`, reason `node_not_found`: no such node, deleted, or in another workspace than the
 * command's (which must not learn that it exists).
 */
export class NodeNotFound extends Schema.TaggedError<NodeNotFound>()("NodeNotFound", {
  nodeId: Schema.String,
  workspaceId: Schema.String
}) {}

/** 409 `conflict`, reason `node_exists`: the id is taken, also by a deleted node. */
export class NodeAlreadyExists extends Schema.TaggedError<NodeAlreadyExists>()("NodeAlreadyExists", {
  nodeId: Schema.String
}) {}

/** Property errors are 400 `bad_request`, reasons on their classes in `../schema/errors.ts`. */
export const NodeError = Schema.Union(NodeNotFound, NodeAlreadyExists, ...PropertyError.members)
export type NodeError = typeof NodeError.Type
