/**
 * Who waits for a partition's projection to pass an offset. Nothing here reads anything: whoever
 * learns that the projection moved (the projector's commit, a notification from another node)
 * calls `advance`, and the waiters whose offset it passed resolve.
 */
export class OffsetWaiters {
  /** The next offset the projection will apply, as last told. */
  next = 0
  /** `bounded`: a read's wait, which has a time limit; a partition catching up waits without one. */
  private readonly waiting = new Set<{ readonly offset: number; readonly bounded: boolean; readonly resolve: (passed: boolean) => void }>()

  /** Resolves true once `offset` is projected, false when `settleAll(false)` or `letReadsGo` comes or the time is up first. */
  wait(offset: number, timeoutMs?: number): Promise<boolean> {
    if (offset < this.next) return Promise.resolve(true)
    return new Promise<boolean>((resolve) => {
      const waiter = {
        offset,
        bounded: timeoutMs !== undefined,
        resolve: (passed: boolean) => {
          if (timer !== undefined) clearTimeout(timer)
          resolve(passed)
        }
      }
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
        this.waiting.delete(waiter)
        resolve(false)
      }, timeoutMs)
      this.waiting.add(waiter)
    })
  }

  /** The projection's next offset is now `next`: those it passed resolve. */
  advance(next: number) {
    this.next = next
    for (const waiter of this.waiting) {
      if (waiter.offset < next) {
        this.waiting.delete(waiter)
        waiter.resolve(true)
      }
    }
  }

  /**
   * The projection failed to reach its database and cannot move until it is back: the reads
   * waiting resolve false now, and their own queries answer for the outage (503) rather than wait
   * it out. A partition catching up waits on.
   */
  letReadsGo() {
    for (const waiter of this.waiting) {
      if (!waiter.bounded) continue
      this.waiting.delete(waiter)
      waiter.resolve(false)
    }
  }

  /** Resolves every waiter with `passed` (false: the partition was lost). */
  settleAll(passed: boolean) {
    for (const waiter of this.waiting) waiter.resolve(passed)
    this.waiting.clear()
  }

  get size() {
    return this.waiting.size
  }
}
