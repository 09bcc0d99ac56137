/** A clock that runs with real time plus an offset the test moves forward. Sleeping stays real,
 * so timeouts inside the platform behave as usual; with `wakeSleepers`, a sleep ends when the moved
 * time reaches its end (as Effect's TestClock does): at once when the test moves the clock past it,
 * else as real time carries the moved clock there. A timer waiting for a time of day (a schedule's
 * next tick) fires when the clock, moved or not, gets there. */
import { Clock, Duration, Effect } from "effect"

export const steppedClock = (options: { readonly wakeSleepers?: boolean } = {}) => {
  let offset = 0
  const real = Clock.make()
  const now = () => Date.now() + offset
  /** `arm`: (re)sets the real timer to the moved time's end of the sleep. */
  const sleepers = new Set<{ readonly until: number; readonly wake: () => void; readonly arm: () => void }>()
  const sleep = (duration: Duration.Duration) =>
    Effect.async<void>((resume) => {
      const millis = Duration.toMillis(duration)
      let timer: ReturnType<typeof setTimeout> | undefined
      const sleeper = {
        until: now() + millis,
        wake: () => end() && resume(Effect.void),
        // a real timer, unless the duration is past what timers take (Effect's clock: forever)
        arm: () => {
          clearTimeout(timer)
          const left = sleeper.until - now()
          timer = left <= 2 ** 31 - 1 ? setTimeout(sleeper.wake, Math.max(0, left)) : undefined
        }
      }
      const end = () => {
        clearTimeout(timer)
        return sleepers.delete(sleeper)
      }
      sleepers.add(sleeper)
      sleeper.arm()
      return Effect.sync(end)
    })
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: now,
    currentTimeMillis: Effect.sync(now),
    unsafeCurrentTimeNanos: () => BigInt(now()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(now()) * 1_000_000n),
    sleep: options.wakeSleepers ? sleep : (duration) => real.sleep(duration)
  }
  const advance = (ms: number) => {
    offset += ms
    for (const sleeper of [...sleepers]) {
      if (sleeper.until <= now()) sleeper.wake()
      else sleeper.arm()
    }
  }
  return { clock, now, advance }
}
