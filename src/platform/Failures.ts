/**
 * What a failure is, in one place. Every failure is one of two classes, as a durable-execution SDK
 * tells them apart:
 * - **retryable**: infrastructure (the database, the log, the cluster, an owner that could not be
 *   reached). It carries no spec code of its own; the same request may succeed once the dependency
 *   is back, so callers are told when to retry (503 `unavailable`, `Retry-After`), a turn ends
 *   `engine_unavailable`, and the node's own work tries again.
 * - **terminal**: everything else that is tagged: a spec code (a refusal, a rule, a missing thing).
 *   The same request gets the same answer, so it is never retried.
 *
 * How a failure is stated to a caller (status, code, reason, message) is the gateway's table
 * (gateway/errors.ts); the agent surface states failures with the same table, which the node
 * provides here as `FailureDescriber`, so there is still one table.
 */
import { type Cause, Context, Effect } from "effect"
import { HostUnavailable } from "../../streams/ActorHost.ts"
import { unavailableOf } from "./Errors.ts"
import type { LoggedError } from "./Logging.ts"

/** The tags of the retryable failures: `DbError` and `LogError` (streams), `ClusterError` (the
 * cluster port), `HostUnavailable` (an actor's owner out of reach) and its answer `Unavailable`. */
const RETRYABLE: ReadonlySet<string> = new Set(["DbError", "LogError", "ClusterError", "HostUnavailable", "Unavailable"])

const tagOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" ? error._tag : undefined

/** Whether another try may succeed: an infrastructure failure, not a spec answer. */
export const isRetryable = (error: unknown): boolean => RETRYABLE.has(tagOf(error) ?? "")

/** An owner out of reach, as the checkpoint answers and audits it: `Unavailable` (retryable). */
export const orOwnerUnreachable = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.mapError((e) => (e instanceof HostUnavailable ? unavailableOf(e) : e)))

export interface FailureDescription {
  readonly status: number
  readonly code: string
  readonly reason: string | undefined
  readonly message: string
  /** A 5xx: what failed, for the log; never told to the caller. */
  readonly failure?: LoggedError
}

export class FailureDescriber extends Context.Tag("svc/FailureDescriber")<FailureDescriber, <E>(cause: Cause.Cause<E>) => FailureDescription>() {}

/** The JSON error body (`{ error: { code, reason?, message } }`): the one shape REST answers, an MCP
 * tool call's error result carries, and the agent's tool result gives the model (spec 7.3). */
export const errorBody = ({ code, reason, message }: { readonly code: string; readonly reason?: string | undefined; readonly message: string }) => ({
  error: reason === undefined ? { code, message } : { code, reason, message }
})

/**
 * Whether a failure is a refusal to run the call (401, 402, 403: the caller's credential, purpose
 * or role, a capability pack not installed, a spend limit) rather than a call that ran and failed:
 * an agent's tool call refused so ends `denied`, not `failed` (spec 2.3; docs/decisions.md).
 */
export const isRefusal = (failure: Pick<FailureDescription, "status">): boolean => failure.status === 401 || failure.status === 402 || failure.status === 403
