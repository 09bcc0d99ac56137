/**
 * Whether this node takes new requests, and how many it is still answering. A node told to stop
 * first stops taking requests: its readiness goes false (`GET /readyz` 503) and a new request gets
 * 503 `unavailable`, reason `draining`, with Retry-After, so that a load balancer still sending
 * is told to go elsewhere. Those it took are answered; then it stops.
 *
 * Counted in the node's registry: drains begun, whether it drains now, and its refusals.
 */
import { Counter, Gauge, type Registry } from "prom-client"

export class Readiness {
  #draining = false
  #requests = 0
  #streams = 0
  /** Since when (epoch ms) this node has drained and refused nothing. */
  #quietSince = 0
  readonly #drains: Counter
  readonly #refusals: Counter
  readonly #drainingGauge: Gauge

  constructor(registry: Registry) {
    const registers = [registry]
    this.#drains = new Counter({ name: "svc_drains_total", help: "Graceful drains begun on this node (SIGTERM, SIGINT)", registers })
    this.#refusals = new Counter({
      name: "svc_drain_refusals_total",
      help: "Requests refused (503 draining, Retry-After) because this node was draining",
      registers
    })
    this.#drainingGauge = new Gauge({ name: "svc_draining", help: "1 once this node drains (its readiness false, new requests refused), else 0", registers })
  }

  get draining(): boolean {
    return this.#draining
  }

  /** From now on new requests are refused; those in flight go on. */
  drain(): void {
    if (!this.#draining) this.#drains.inc()
    this.#draining = true
    this.#drainingGauge.set(1)
    this.#quietSince = Date.now()
  }

  /**
   * How long (ms) the draining node has refused no request: a load balancer that still sends has
   * not yet seen the readiness go false, and the node waits for it before it stops listening.
   */
  get quietFor(): number {
    return Date.now() - this.#quietSince
  }

  refused(): void {
    this.#refusals.inc()
    this.#quietSince = Date.now()
  }

  /** Requests taken and not yet answered (a stream counts until the handler hands it over). */
  get requests(): number {
    return this.#requests
  }

  /** Streams open (chat turns, A2A streams). */
  get streams(): number {
    return this.#streams
  }

  requestStarted(): void {
    this.#requests++
  }

  requestEnded(): void {
    this.#requests--
  }

  streamOpened(): void {
    this.#streams++
  }

  streamClosed(): void {
    this.#streams--
  }
}

/** Routes a draining node still answers: its liveness and readiness. */
export const SERVED_WHILE_DRAINING: ReadonlySet<string> = new Set(["/healthz", "/readyz"])
