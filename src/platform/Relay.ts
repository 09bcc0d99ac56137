/**
 * What a capability returns when its result is still happening (a turn's events, an A2A task's
 * updates): the process is started, and its updates are held until its one listener attaches,
 * then handed on as they come. The gateway only frames them (SSE, JSON, JSON-RPC).
 */
export interface Listener<E, O> {
  readonly event: (event: E) => void
  /** Called once, last. */
  readonly done: (outcome: O) => void
}

export interface Started<E, O> {
  /** Attaches the one listener: it hears what was held, then each update as it comes. */
  readonly listen: (listener: Listener<E, O>) => void
}

export class Relay<E, O> implements Listener<E, O>, Started<E, O> {
  private held: Array<E> = []
  private ended: { readonly outcome: O } | undefined
  private listener: Listener<E, O> | undefined

  /** `onEnd`: called once, as the process ends (a share it held is given back). */
  constructor(private readonly onEnd?: () => void) {}

  readonly event = (event: E): void => {
    if (this.ended !== undefined) return
    if (this.listener === undefined) this.held.push(event)
    else this.listener.event(event)
  }

  readonly done = (outcome: O): void => {
    if (this.ended !== undefined) return
    this.ended = { outcome }
    this.onEnd?.()
    this.listener?.done(outcome)
  }

  readonly listen = (listener: Listener<E, O>): void => {
    if (this.listener !== undefined) throw new Error("a started process has one listener")
    this.listener = listener
    const held = this.held
    this.held = []
    for (const event of held) listener.event(event)
    if (this.ended !== undefined) listener.done(this.ended.outcome)
  }
}
