/**
 * The cluster of one: the embedded mode's node owns every partition and nothing is remote.
 */
import { Effect, Layer } from "effect"
import { Cluster, ClusterError, type ClusterService } from "./Cluster.ts"
import { allPartitions } from "./EventLog.ts"

export const make = (nodeId: string, partitions: number): ClusterService => ({
  nodeId,
  join: (handlers) =>
    Effect.acquireRelease(
      Effect.sync(() => handlers.onAssigned(allPartitions(partitions))),
      () => Effect.sync(() => handlers.onRevoked(allPartitions(partitions)))
    ),
  send: (partition) =>
    Effect.fail(new ClusterError({ reason: "not_owner", message: `no node owns partition ${partition}` })),
  members: () => Effect.succeed([{ nodeId, partitions: allPartitions(partitions) }])
})

export const layer = (nodeId: string, partitions: number) => Layer.succeed(Cluster, make(nodeId, partitions))
