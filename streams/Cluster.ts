/**
 * The cluster port: which partitions this node owns, and how a command reaches the owner of a
 * partition this node does not own. Kafka: ownership is the consumer-group assignment of the
 * commands topic, remote commands travel on that topic and replies on a per-node reply topic.
 * Embedded: one node owns every partition and nothing is remote.
 */
import { Context, Data, type Effect, type Scope } from "effect"

/** A command on the wire: everything the owner needs to decide it. */
export interface RemoteCommand {
  /** Actor key; the command is produced with this key into the key's partition. */
  readonly key: string
  readonly commandId: string
  /** The encoded command (JSON). */
  readonly body: unknown
  readonly at: string
  readonly actor: string
}

/** The owner's answer (JSON); opaque to the transport. */
export type RemoteReply = unknown

export class ClusterError extends Data.TaggedError("ClusterError")<{
  readonly reason: "timeout" | "not_owner" | "transport"
  readonly message: string
  readonly cause?: unknown
}> {}

export interface ClusterHandlers {
  /**
   * Partitions newly assigned to this node. The host catches up before deciding; commands for
   * these partitions that arrive meanwhile wait (`onCommand` may take as long as it needs).
   */
  readonly onAssigned: (partitions: ReadonlyArray<number>) => void
  /**
   * Partitions taken away: stop deciding for them at once. Only what moves is told; the new owner
   * may already have been told it gained them (its writer's fence refuses this node's appends).
   */
  readonly onRevoked: (partitions: ReadonlyArray<number>) => void
  /** A command that reached this node over the commands topic for a partition it owns. */
  readonly onCommand: (partition: number, command: RemoteCommand) => Promise<RemoteReply>
}

/** A node of the cluster as the group sees it: its id and the partitions assigned to it. */
export interface ClusterMember {
  readonly nodeId: string
  readonly partitions: ReadonlyArray<number>
}

export interface ClusterService {
  readonly nodeId: string
  /**
   * Joins the cluster and keeps the handlers informed until the scope closes (leaving the
   * cluster cleanly). Completes once this node has its first assignment.
   */
  readonly join: (handlers: ClusterHandlers) => Effect.Effect<void, ClusterError, Scope.Scope>
  /** Sends a command to the owner of `partition` and waits for its reply. */
  readonly send: (
    partition: number,
    command: RemoteCommand,
    timeoutMs: number
  ) => Effect.Effect<RemoteReply, ClusterError>
  /**
   * The nodes in the cluster now and their partitions, this one included once it has joined. A
   * group that is rebalancing may list members without partitions.
   */
  readonly members: () => Effect.Effect<ReadonlyArray<ClusterMember>, ClusterError>
}

export class Cluster extends Context.Tag("svc/streams/Cluster")<Cluster, ClusterService>() {}
