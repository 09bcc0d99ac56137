/**
 * Whether this node takes new requests, and how many it is still answering. A node told to stop
 * first stops taking requests: its readiness goes false (`GET /readyz` 503) and a new request gets
 * 503 `unavailable`, reason `draining`, with Retry-After, so that a load balancer still sending
 * is told to go elsewhere. Those it took are answered; then it stops.
 */
export class Readiness {
  #draining = false
  #requests = 0
  #streams = 0
  /** Since when (epoch ms) this node has drained and refused nothing. */
  #quietSince = 0

  get draining(): boolean {
    return this.#draining
  }

  /** From now on new requests are refused; those in flight go on. */
  drain(): void {
    this.#draining = true
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
