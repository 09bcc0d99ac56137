/**
 * Admission: what a node holds at once is bounded (docs/decisions.md, "Admission control"). A
 * gate counts the places taken under one bound; a place is taken at once or refused at once, and
 * given back exactly once, however often its release is called. Synchronous and allocation-light:
 * it sits on the hot path of every turn, stream and command.
 *
 * The actor host bounds the commands queued on its partition workers (`queued_commands`); the
 * assistant bounds its turns and the streams callers follow (src/platform/Admission.ts).
 */

/** What a node bounds: turns being started (until their run is recorded), turns running, streams followed, commands queued. */
export type AdmissionBound = "turns_starting" | "turns_running" | "open_streams" | "queued_commands"

/** Gives a taken place back; later calls do nothing. */
export type Release = () => void

export interface Gate {
  readonly bound: AdmissionBound
  /** Places under this bound; positive. */
  readonly limit: number
  /** Places taken now. */
  readonly held: () => number
  /** Takes a place, or undefined when every place is taken. */
  readonly tryAcquire: () => Release | undefined
  /**
   * Takes a place now or, when every place is taken, as soon as one is given back: waiters are
   * served first come, first served, ahead of any later `tryAcquire`. Answers a cancel that leaves
   * the queue (a place already given is the caller's to release).
   */
  readonly waitFor: (taken: (release: Release) => void) => () => void
}

export const makeGate = (bound: AdmissionBound, limit: number): Gate => {
  if (!Number.isInteger(limit) || limit <= 0) throw new Error(`the bound ${bound} must be a positive integer, got ${limit}`)
  let held = 0
  const waiters: Array<(release: Release) => void> = []
  // a place given back goes to the first waiter as it is (held unchanged), else back to the gate
  const place = (): Release => {
    let released = false
    return () => {
      if (released) return
      released = true
      const next = waiters.shift()
      if (next === undefined) held--
      else next(place())
    }
  }
  const tryAcquire = () => {
    if (held >= limit) return undefined
    held++
    return place()
  }
  return {
    bound,
    limit,
    held: () => held,
    tryAcquire,
    waitFor: (taken) => {
      const now = tryAcquire()
      if (now !== undefined) {
        taken(now)
        return () => {}
      }
      waiters.push(taken)
      return () => {
        const at = waiters.indexOf(taken)
        if (at >= 0) waiters.splice(at, 1)
      }
    }
  }
}
