/** A clock that runs with real time plus an offset the test moves forward. Sleeping stays real,
 * so timeouts inside the platform behave as usual; with `wakeSleepers`, a sleep also ends once the
 * moved time reaches its end (as Effect's TestClock does), so a timer waiting for a time of day
 * (a schedule's next tick) fires when the test moves the clock there. */
import { Clock, Duration, Effect } from "effect"

export const steppedClock = (options: { readonly wakeSleepers?: boolean } = {}) => {
  let offset = 0
  const real = Clock.make()
  const now = () => Date.now() + offset
  const sleepers = new Set<{ readonly until: number; readonly wake: () => void }>()
  const sleep = (duration: Duration.Duration) =>
    Effect.async<void>((resume) => {
      const millis = Duration.toMillis(duration)
      const sleeper = { until: now() + millis, wake: () => end() && resume(Effect.void) }
      // a real timer too, unless the duration is past what timers take (Effect's clock: forever)
      const timer = millis <= 2 ** 31 - 1 ? setTimeout(sleeper.wake, millis) : undefined
      const end = () => {
        clearTimeout(timer)
        return sleepers.delete(sleeper)
      }
      sleepers.add(sleeper)
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
    for (const sleeper of [...sleepers]) if (sleeper.until <= now()) sleeper.wake()
  }
  return { clock, now, advance }
}
