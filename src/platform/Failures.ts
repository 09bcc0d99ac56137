/**
 * How a failure is stated to a caller: status, code, reason, message. The table itself is the
 * gateway's (gateway/errors.ts); the agent surface (tool results, approved calls) states failures
 * with the same table, which the node provides here, so there is still one table.
 */
import { type Cause, Context } from "effect"
import type { LoggedError } from "./Logging.ts"

export interface FailureDescription {
  readonly status: number
  readonly code: string
  readonly reason: string | undefined
  readonly message: string
  /** A 5xx: what failed, for the log; never told to the caller. */
  readonly failure?: LoggedError
}

export class FailureDescriber extends Context.Tag("svc/FailureDescriber")<FailureDescriber, <E>(cause: Cause.Cause<E>) => FailureDescription>() {}
