/**
 * Read-your-writes by log position. A command's answer names where its events landed (partition
 * and offset); the read models are folds of the log that run behind it, so a read that must see
 * a write waits until the projection of that partition has passed that offset.
 *
 * An invocation carries one fence (a fiber ref, inherited by what it forks): the positions it
 * must see (those the caller sent back) plus those of its own writes as they happen, and, as far as
 * they can be had, those this node acknowledged before it began. Every read-model query awaits the
 * fence first, lazily: an invocation that reads nothing waits for nothing, and a position already
 * passed costs a lookup.
 */
import { Effect, FiberRef } from "effect"

/** Where a command's events ended: the offset of its last event in its partition. */
export interface Position {
  readonly partition: number
  readonly offset: number
}

/** The highest offset per partition. */
export type Positions = ReadonlyMap<number, number>

export const addPosition = (into: Map<number, number>, { partition, offset }: Position): void => {
  const known = into.get(partition)
  if (known === undefined || known < offset) into.set(partition, offset)
}

/** The `Svc-Position` header: `partition:offset` pairs separated by commas, one per partition. */
export const formatPositions = (positions: Positions): string =>
  [...positions].sort(([a], [b]) => a - b).map(([partition, offset]) => `${partition}:${offset}`).join(",")

const PAIR = /^\s*(\d{1,6}):(\d{1,15})\s*$/

/** The header read back; undefined when it is malformed or names a partition the log lacks. */
export const parsePositions = (header: string, partitions: number): Positions | undefined => {
  const positions = new Map<number, number>()
  for (const pair of header.split(",")) {
    const match = PAIR.exec(pair)
    if (match === null) return undefined
    const partition = Number(match[1])
    if (partition >= partitions) return undefined
    addPosition(positions, { partition, offset: Number(match[2]) })
  }
  return positions
}

/** What one invocation's reads wait for. */
export interface ReadFence {
  /** The positions to see; this invocation's own writes add theirs. */
  readonly positions: Map<number, number>
  /**
   * What this node acknowledged before the invocation that its caller did not name: awaited
   * (`awaitAcknowledged`) where its partition is not moving, within the bound, and then read as the
   * read models stand, never refused for it.
   */
  readonly acknowledged: Positions
  /** Where this invocation's own writes landed. */
  readonly written: Map<number, number>
  /** The positions already awaited, so each is waited for once. */
  readonly passed: Map<number, number>
  /** Resolves true once the read models have passed every given position, false past the bound. */
  readonly await: (positions: Positions) => Promise<boolean>
  /** Resolves once the read models have passed the given positions of partitions that are not moving, or the bound has passed. */
  readonly awaitAcknowledged: (positions: Positions) => Promise<void>
}

export const CurrentReadFence = FiberRef.unsafeMake<ReadFence | undefined>(undefined)

/** Notes a write of the current invocation, so its later reads see it. */
export const noteWrite = (position: Position) =>
  Effect.map(FiberRef.get(CurrentReadFence), (fence) => {
    if (fence === undefined) return
    addPosition(fence.positions, position)
    addPosition(fence.written, position)
  })

/** Adds positions the current invocation's reads must see (records written outside its commands). */
export const mustSee = (positions: Positions) =>
  Effect.map(FiberRef.get(CurrentReadFence), (fence) => {
    if (fence !== undefined) for (const [partition, offset] of positions) addPosition(fence.positions, { partition, offset })
  })

/** The positions of `from` not passed yet, beyond what `beside` already asks for. */
const notPassed = (fence: ReadFence, from: Positions, beside?: Positions): Map<number, number> | undefined => {
  let wanted: Map<number, number> | undefined
  for (const [partition, offset] of from) {
    const passed = fence.passed.get(partition)
    if (passed !== undefined && passed >= offset) continue
    if ((beside?.get(partition) ?? -1) >= offset) continue
    ;(wanted ??= new Map()).set(partition, offset)
  }
  return wanted
}

/**
 * Waits until the read models have passed what the current fence holds (nothing to do outside an
 * invocation). Succeeds false when the bound passed first on a position the invocation must see;
 * what the node acknowledged besides is waited for once, as far as it can be had.
 */
export const awaitFence: Effect.Effect<boolean> = Effect.flatMap(FiberRef.get(CurrentReadFence), (fence) => {
  if (fence === undefined) return Effect.succeed(true)
  const required = notPassed(fence, fence.positions)
  const acknowledged = notPassed(fence, fence.acknowledged, required)
  if (required === undefined && acknowledged === undefined) return Effect.succeed(true)
  return Effect.map(
    Effect.promise(() =>
      Promise.all([
        required === undefined ? true : fence.await(required),
        acknowledged === undefined ? undefined : fence.awaitAcknowledged(acknowledged)
      ])
    ),
    ([caughtUp]) => {
      if (caughtUp && required !== undefined) for (const [partition, offset] of required) addPosition(fence.passed, { partition, offset })
      // waited for once: a later read of the invocation reads as the read models stand
      if (acknowledged !== undefined) for (const [partition, offset] of acknowledged) addPosition(fence.passed, { partition, offset })
      return caughtUp
    }
  )
})
