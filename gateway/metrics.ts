/**
 * The gateway's metrics: requests by route and status, open SSE streams. The `/metrics` listener
 * Prometheus scrapes is `metricsListener.ts`.
 *
 * A request is counted under its route's pattern (`/v1/:orgSlug/:workspaceSlug/chat/stream`) or
 * the capability route it named (`/v1/:orgSlug/:workspaceSlug/node/create`), never its URL: the
 * slugs and ids in URLs would make a series per workspace. The children of each label set are
 * made once and kept, so counting a request looks them up and observes.
 */
import { Gauge, Histogram } from "prom-client"
import type { Registry as CapabilityRegistry } from "../src/checkpoint/Capability.ts"
import type { MetricsPort } from "../src/platform/Metrics.ts"

type Observer = Histogram.Internal<"method" | "route" | "status">
type Counter = Gauge.Internal<"route">

/** The methods a request is counted under; anything else is `_OTHER` (a client may send any token). */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"])

export class HttpMetrics {
  readonly #requests: Histogram<"method" | "route" | "status">
  readonly #streams: Gauge<"route">
  /** route → method → status → child. */
  readonly #observers = new Map<string, Map<string, Map<number, Observer>>>()
  readonly #streamCounters = new Map<string, Counter>()

  constructor({ registry, latencyBuckets }: MetricsPort) {
    this.#requests = new Histogram({
      name: "svc_http_request_duration_seconds",
      help: "HTTP requests answered, by method, route pattern and status: from arrival until the answer (a stream: until it opened) was written",
      labelNames: ["method", "route", "status"],
      buckets: [...latencyBuckets],
      registers: [registry]
    })
    this.#streams = new Gauge({
      name: "svc_sse_streams_open",
      help: "Server-sent event streams open on this node, by route pattern",
      labelNames: ["route"],
      registers: [registry]
    })
  }

  /** `startedMs`: performance.now() when the request arrived. */
  request(method: string, route: string, status: number, startedMs: number): void {
    const methodLabel = METHODS.has(method) ? method : "_OTHER"
    let byMethod = this.#observers.get(route)
    if (byMethod === undefined) this.#observers.set(route, (byMethod = new Map()))
    let byStatus = byMethod.get(methodLabel)
    if (byStatus === undefined) byMethod.set(methodLabel, (byStatus = new Map()))
    let observer = byStatus.get(status)
    if (observer === undefined) {
      observer = this.#requests.labels(methodLabel, route, String(status))
      byStatus.set(status, observer)
    }
    observer.observe((performance.now() - startedMs) / 1000)
  }

  streamOpened(route: string): void {
    this.#streamCounter(route).inc()
  }

  streamClosed(route: string): void {
    this.#streamCounter(route).dec()
  }

  #streamCounter(route: string): Counter {
    let counter = this.#streamCounters.get(route)
    if (counter === undefined) {
      counter = this.#streams.labels(route)
      this.#streamCounters.set(route, counter)
    }
    return counter
  }
}

/** Capability name → the route its requests are counted under, as route() patterns are written. */
export const capabilityRouteNames = (registry: CapabilityRegistry): ReadonlyMap<string, string> => {
  const names = new Map<string, string>()
  for (const [route, capability] of registry.principalRoutes) names.set(capability, `/v1/${pathOf(route)}`)
  for (const [route, capability] of registry.placeRoutes) names.set(capability, `/v1/:orgSlug/:workspaceSlug/${pathOf(route)}`)
  return names
}

/** A registry route is `<method> <path>`. */
const pathOf = (route: string): string => route.slice(route.indexOf(" ") + 1)
