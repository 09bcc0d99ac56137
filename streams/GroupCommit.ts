/**
 * Group commit: items submitted while a commit is in flight (or within a short window after the
 * first one) go together in the next commit, and each submitter resumes with its own item's
 * result once the commit that holds it has succeeded, or fails with it. One queue and one fiber
 * per committer, closed with its scope.
 *
 * The log adapters (per partition), the audit writer and the billing charges each commit through
 * one: a commit costs about the same for one item as for hundreds (one statement, one fsync, one
 * produce request), so under load the cost per item falls with the load.
 */
import { Deferred, Effect, Exit, FiberId, Queue, type Scope } from "effect"

export interface GroupCommitOptions<A, B, E> {
  /** Most items one commit carries; the rest wait for the next. */
  readonly maxItems: number
  /** Optional: whether one more item still fits the commit, given those already in it. */
  readonly fits?: (taken: ReadonlyArray<A>, next: A) => boolean
  /**
   * How long the first item of a commit waits for company (0: commit at once; items that arrive
   * during a commit still go together in the next).
   */
  readonly windowMs?: number
  /** Commits the items together; one result per item, in order. */
  readonly commit: (items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E>
  /**
   * What a submission still unanswered when the scope closes fails with (in flight, its outcome
   * is unknown); without it, such a submission is interrupted.
   */
  readonly closed?: () => E
}

export interface GroupCommitter<A, B, E> {
  /** Succeeds with the item's result once the commit holding it has succeeded. */
  readonly submit: (item: A) => Effect.Effect<B, E>
}

interface Submitted<A, B, E> {
  readonly item: A
  readonly done: Deferred.Deferred<B, E>
}

/** The window is real time whatever clock the node's domain logic sees (tests step theirs). */
const realSleep = (ms: number) =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(timer))
  })

/**
 * A committer that lives as long as the scope. When it closes, every submission not yet answered
 * (in the commit under way, or still queued) fails at once with `closed`: its submitter must not
 * wait for a commit that will never answer.
 */
export const make = <A, B, E>(options: GroupCommitOptions<A, B, E>): Effect.Effect<GroupCommitter<A, B, E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const queue = yield* Effect.acquireRelease(Queue.unbounded<Submitted<A, B, E>>(), Queue.shutdown)
    // the first of the next commit, taken while fitting the one before
    let carried: Submitted<A, B, E> | undefined
    let inFlight: ReadonlyArray<Submitted<A, B, E>> = []
    let closing = false
    const closedExit = (): Exit.Exit<B, E> => (options.closed === undefined ? Exit.interrupt(FiberId.none) : Exit.fail(options.closed()))
    // runs after the commit fiber is interrupted (finalizers run last added first) and before the
    // queue shuts down
    yield* Effect.addFinalizer(() =>
      Effect.map(Queue.takeAll(queue), (queued) => {
        closing = true
        for (const { done } of [...inFlight, ...(carried === undefined ? [] : [carried]), ...queued]) Deferred.unsafeDone(done, closedExit())
      })
    )

    const takeGroup = Effect.gen(function* () {
      const first = carried ?? (yield* Queue.take(queue))
      carried = undefined
      if (options.windowMs !== undefined && options.windowMs > 0) yield* realSleep(options.windowMs)
      const group = [first]
      const items = [first.item]
      while (group.length < options.maxItems) {
        const next = yield* Queue.poll(queue)
        if (next._tag === "None") break
        if (options.fits !== undefined && !options.fits(items, next.value.item)) {
          carried = next.value
          break
        }
        group.push(next.value)
        items.push(next.value.item)
      }
      return group
    })

    const commitGroup = (group: ReadonlyArray<Submitted<A, B, E>>) =>
      Effect.suspend(() => {
        inFlight = group
        return Effect.flatMap(Effect.exit(options.commit(group.map((s) => s.item))), (exit) =>
          Effect.sync(() => {
            inFlight = []
            if (Exit.isSuccess(exit)) group.forEach(({ done }, i) => Deferred.unsafeDone(done, Exit.succeed(exit.value[i])))
            else for (const { done } of group) Deferred.unsafeDone(done, Exit.failCause(exit.cause))
          })
        )
      })

    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(takeGroup, commitGroup)))

    return {
      submit: (item) =>
        Effect.suspend(() =>
          closing
            ? closedExit()
            : Effect.flatMap(Deferred.make<B, E>(), (done) => Effect.zipRight(Queue.offer(queue, { item, done }), Deferred.await(done)))
        )
    } satisfies GroupCommitter<A, B, E>
  })
