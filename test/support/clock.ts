/** A clock that runs with real time plus an offset the test moves forward; sleeping stays real,
 * so timeouts inside the platform behave as usual. */
import { Clock, Effect } from "effect"

export const steppedClock = () => {
  let offset = 0
  const real = Clock.make()
  const now = () => Date.now() + offset
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: now,
    currentTimeMillis: Effect.sync(now),
    unsafeCurrentTimeNanos: () => BigInt(now()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(now()) * 1_000_000n),
    sleep: (duration) => real.sleep(duration)
  }
  return { clock, now, advance: (ms: number) => void (offset += ms) }
}
