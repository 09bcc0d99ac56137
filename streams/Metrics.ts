/**
 * A node's metrics, in the Prometheus text format (prom-client). Each node has a registry of its
 * own, built with its layers: a test may run several nodes in one process, and each must answer
 * for itself. What the process measures about itself (CPU, memory, event loop, GC) is in a
 * registry the node's registry holds, made on its first scrape; every node of a process answers it.
 *
 * The hot paths only increment and observe; what is cheap to read when scraped and costly to keep
 * up to date (partitions, projection lag, turns running) is read by `collect` callbacks where its
 * state lives (`ActorHost.ts`, `TurnRegistry.ts`), so it costs nothing between scrapes.
 */
import { Context, Layer } from "effect"
import { collectDefaultMetrics, Counter, exponentialBuckets, Gauge, Histogram, Registry } from "prom-client"

/** Seconds, from half a millisecond (a cached command) to half a minute (a command timing out). */
export const LATENCY_BUCKETS: ReadonlyArray<number> = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
/** Items per batch: 1 to 4096 in powers of two. */
export const SIZE_BUCKETS: ReadonlyArray<number> = exponentialBuckets(1, 2, 13)

export interface NodeMetricsService {
  readonly registry: Registry
  /** From a command's enqueue on this node's partition worker to its answer, by actor kind. */
  readonly commandSeconds: Histogram<"kind">
  /** Commands one partition worker decided together. */
  readonly batchCommands: Histogram
  /** One append through a partition writer, until durable (or failed). */
  readonly appendSeconds: Histogram
  /** Events one partition writer's append carried. */
  readonly appendEvents: Histogram
  /** Audit records one append of the node's audit writer carried. */
  readonly auditBatchRecords: Histogram
  /** A2A tasks started on this node whose turn has not ended. */
  readonly a2aTasksInFlight: Gauge
  /** Requests and commands this node refused at once because a bound of what it holds was reached, by bound (streams/Admission.ts). */
  readonly admissionRefusals: Counter<"bound">
  /** Changes of this node's partitions the cluster reported (`ClusterHandlers`), by change. */
  readonly rebalances: Counter<"change">
  /** Per partition gained: from the cluster's assignment until this node decides there. */
  readonly rebalancePauseSeconds: Histogram
}

export class NodeMetrics extends Context.Tag("svc/streams/NodeMetrics")<NodeMetrics, NodeMetricsService>() {}

/** A node's registry, holding the registry of what the process measures about itself. */
export class NodeRegistry extends Registry {
  #process: Registry | undefined

  /** Created on first scrape: a process that never exposes metrics never samples them. */
  processMetrics(): Registry {
    if (this.#process === undefined) {
      this.#process = new Registry()
      collectDefaultMetrics({ register: this.#process })
    }
    return this.#process
  }
}

export const make = (): NodeMetricsService => {
  const registry = new NodeRegistry()
  const registers = [registry]
  return {
    registry,
    commandSeconds: new Histogram({
      name: "svc_command_duration_seconds",
      help: "Commands decided on this node's partition workers, from enqueue to answer, by actor kind",
      labelNames: ["kind"],
      buckets: [...LATENCY_BUCKETS],
      registers
    }),
    batchCommands: new Histogram({
      name: "svc_command_batch_size",
      help: "Commands one partition worker decided and appended together",
      buckets: [...SIZE_BUCKETS],
      registers
    }),
    appendSeconds: new Histogram({
      name: "svc_log_append_duration_seconds",
      help: "Appends through this node's partition writers, until durable or failed",
      buckets: [...LATENCY_BUCKETS],
      registers
    }),
    appendEvents: new Histogram({
      name: "svc_log_append_events",
      help: "Events one partition writer's append carried",
      buckets: [...SIZE_BUCKETS],
      registers
    }),
    auditBatchRecords: new Histogram({
      name: "svc_audit_batch_records",
      help: "Audit records one append of this node's audit writer carried",
      buckets: [...SIZE_BUCKETS],
      registers
    }),
    a2aTasksInFlight: new Gauge({
      name: "svc_a2a_tasks_in_flight",
      help: "A2A tasks started on this node whose turn has not ended",
      registers
    }),
    admissionRefusals: new Counter({
      name: "svc_admission_refusals_total",
      help: "Requests and commands refused at once (503, Retry-After) because this node held as much as a bound allows, by bound",
      labelNames: ["bound"],
      registers
    }),
    rebalances: new Counter({
      name: "svc_rebalances_total",
      help: "Changes of this node's partitions the cluster reported, by change (assigned, revoked): one per change, however many partitions it moved",
      labelNames: ["change"],
      registers
    }),
    rebalancePauseSeconds: new Histogram({
      name: "svc_rebalance_pause_seconds",
      help: "Per partition assigned to this node: from the assignment until its writer is open (the previous owner fenced) and its read models hold the log's end, when commands for it are decided again here. The time the group took between the previous owner's revocation and this assignment is not in it",
      buckets: [...LATENCY_BUCKETS],
      registers
    })
  }
}

export const layer: Layer.Layer<NodeMetrics> = Layer.sync(NodeMetrics, make)

/** What a scrape answers: the process's metrics (a node's registry holds them), then the node's. */
export const exposition = async (registry: Registry): Promise<{ readonly contentType: string; readonly text: string }> => {
  const processMetrics = registry instanceof NodeRegistry ? registry.processMetrics().metrics() : Promise.resolve("")
  const [process, node] = await Promise.all([processMetrics, registry.metrics()])
  return { contentType: registry.contentType, text: process + node }
}
