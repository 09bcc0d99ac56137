/**
 * The cluster as the answering node sees it (`cluster.get`, Owner only): the group's members and
 * their partitions with what each reported of itself (Presence.ts), each partition's progress from
 * the log to the read models, and the node's throughput samples (Throughput.ts).
 */
import { Effect } from "effect"
import manifest from "../../package.json" with { type: "json" }
import { ActorHost } from "../../streams/ActorHost.ts"
import { Cluster } from "../../streams/Cluster.ts"
import { Db } from "../../streams/Db.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { type AnyCapability, implement } from "../checkpoint/Capability.ts"
import type { ClusterNode } from "../platform/Wire.ts"
import { TurnRegistry } from "../assistant/TurnRegistry.ts"
import * as Api from "./Api.ts"
import { Presence } from "./Presence.ts"
import { readProgress, Throughput } from "./Throughput.ts"

export const getCluster = implement(Api.getCluster, () =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const members = yield* (yield* Cluster).members()
    const { owned, ready } = host.ownership()
    // this node answers for itself from its host, which knows readiness, even mid-rebalance
    const self: ClusterNode = { nodeId: host.nodeId, self: true, version: manifest.version, draining: !(yield* TurnRegistry).accepting(), partitions: owned, ready }
    const reports = yield* (yield* Presence).reports
    const others = members
      .filter((member) => member.nodeId !== host.nodeId)
      .map((member): ClusterNode => {
        const report = reports.get(member.nodeId)
        return { nodeId: member.nodeId, self: false, version: report?.version ?? null, draining: report?.draining ?? null, partitions: member.partitions, ready: report?.ready ?? null }
      })
    return {
      nodes: [self, ...others.sort((a, b) => a.nodeId.localeCompare(b.nodeId))],
      partitions: yield* readProgress(yield* EventLog, yield* Db),
      throughput: (yield* Throughput).history()
    }
  })
)

export const clusterCapabilities: ReadonlyArray<AnyCapability> = [getCluster]
