/**
 * Work of the node that runs outside `invoke`, and the read fence it runs under: each of its reads
 * waits for what the node has acknowledged by then.
 */
import { Effect } from "effect"
import { ActorHost, type ActorHostService } from "../../streams/ActorHost.ts"
import { CurrentReadFence, type ReadFence } from "../../streams/ReadFence.ts"

/** How long a read waits for the read models to pass the writes it must see (then 503, retryable). */
export const READ_FENCE_TIMEOUT_MS = 5_000

/**
 * The fence of everything run on a node's runtime outside `invoke` (sign-in, device login, SSO,
 * a turn's process, operator tools): each read waits for what the node has acknowledged by then.
 */
export const nodeFence = (host: ActorHostService): ReadFence => ({
  get positions() {
    return new Map(host.unprojected())
  },
  // the node's own work must see all it acknowledged: none of it is left to chance
  acknowledged: new Map(),
  passed: new Map(),
  written: new Map(),
  await: (wanted) => host.awaitProjected(wanted, READ_FENCE_TIMEOUT_MS),
  awaitAcknowledged: () => Promise.resolve()
})

/**
 * Starts what a capability goes on doing after it answers (a turn, a task's follower): it outlives
 * the call, and each of its reads waits for what the node has acknowledged by then, like any
 * process of the node's.
 */
export const startInBackground = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  // interruptible whatever region starts it: its own timeouts must work
  Effect.flatMap(ActorHost, (host) => Effect.forkDaemon(Effect.interruptible(Effect.locally(effect, CurrentReadFence, nodeFence(host)))))
