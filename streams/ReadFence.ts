/**
 * Read-your-writes by log position. A command's answer names where its events landed (partition
 * and offset); the read models are folds of the log that run behind it, so a read that must see
 * a write waits until the projection of that partition has passed that offset.
 *
 * An invocation carries one fence (a fiber ref, inherited by what it forks): the positions it
 * must see (those the caller sent back, those this node acknowledged before it began) plus those
 * of its own writes as they happen. Every read-model query awaits the fence first, lazily: an
 * invocation that reads nothing waits for nothing, and a position already passed costs a lookup.
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
  /** Where this invocation's own writes landed. */
  readonly written: Map<number, number>
  /** The positions already awaited, so each is waited for once. */
  readonly passed: Map<number, number>
  /** Resolves true once the read models have passed every given position, false past the bound. */
  readonly await: (positions: Positions) => Promise<boolean>
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

/**
 * Waits until the read models have passed what the current fence holds (nothing to do outside an
 * invocation). Succeeds false when the bound passed first.
 */
export const awaitFence: Effect.Effect<boolean> = Effect.flatMap(FiberRef.get(CurrentReadFence), (fence) => {
  if (fence === undefined) return Effect.succeed(true)
  let wanted: Map<number, number> | undefined
  for (const [partition, offset] of fence.positions) {
    const passed = fence.passed.get(partition)
    if (passed !== undefined && passed >= offset) continue
    ;(wanted ??= new Map()).set(partition, offset)
  }
  if (wanted === undefined) return Effect.succeed(true)
  const waiting = wanted
  return Effect.map(
    Effect.promise(() => fence.await(waiting)),
    (caughtUp) => {
      if (caughtUp) for (const [partition, offset] of waiting) addPosition(fence.passed, { partition, offset })
      return caughtUp
    }
  )
})
