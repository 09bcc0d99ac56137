/**
 * What a command comes to (an outcome), how it crosses the cluster (a reply), and what a caller of
 * the host gets back (`Accepted` or a failure).
 */
import { Data, Effect, Schema } from "effect"
import { type AnyActorKind, type CommandMeta, decodeEvent, encodeEvent } from "../../actors/kernel.ts"
import type { Position } from "../ReadFence.ts"

export interface Accepted<S, E> {
  readonly state: S
  readonly seq: number
  /** The events this command caused; empty when it was a retry of a command already decided. */
  readonly events: ReadonlyArray<E>
  readonly duplicate: boolean
  /** Where the key's last event this node knows of sits, while it may not be projected yet. */
  readonly position: Position | undefined
}

/**
 * Retryable: the owner could not be reached or changed under the command, or (`overloaded`) held
 * as many commands as it queues and refused this one at once (streams/Admission.ts).
 */
export class HostUnavailable extends Data.TaggedError("HostUnavailable")<{
  readonly reason: "not_owner" | "timeout" | "ownership_lost" | "failure" | "overloaded"
  readonly message: string
}> {}

export type Outcome =
  | {
      readonly ok: true
      readonly seq: number
      readonly state: unknown
      readonly events: ReadonlyArray<{ readonly _tag: string }>
      readonly duplicate: boolean
      readonly position: Position | undefined
    }
  | { readonly ok: false; readonly rejected: unknown }
  | { readonly ok: false; readonly unavailable: HostUnavailable["reason"]; readonly message: string }

/** An outcome as it crosses the cluster: state, events and rejection encoded. */
export type Reply =
  | {
      readonly ok: true
      readonly seq: number
      readonly state: unknown
      readonly events: ReadonlyArray<{ type: string; payload: unknown }>
      readonly duplicate: boolean
      readonly position: Position | null
    }
  | { readonly ok: false; readonly rejected: unknown }
  | { readonly ok: false; readonly unavailable: HostUnavailable["reason"]; readonly message: string }

export type AppendReply =
  | { readonly ok: true; readonly offsets: ReadonlyArray<number> }
  | { readonly ok: false; readonly unavailable: HostUnavailable["reason"]; readonly message: string }

/** A command queued on its partition's worker, answered through `settle`. */
export interface Job {
  readonly kind: AnyActorKind
  readonly key: string
  readonly command: { readonly _tag: string }
  readonly meta: CommandMeta
  readonly settle: (outcome: Outcome) => void
}

/** The reserved key of a command that carries records to append (no actor kind has it: no colon). */
export const APPEND_KEY = "$append"

export const AppendedRecords = Schema.Array(Schema.Struct({
  key: Schema.String,
  seq: Schema.Number,
  firstSeq: Schema.Number,
  type: Schema.String,
  payload: Schema.Unknown,
  at: Schema.String,
  commandId: Schema.String,
  actor: Schema.String
}))

export const notOwner = (): Outcome => ({ ok: false, unavailable: "not_owner", message: "this node does not own the partition" })

export const failure = (message: string): Outcome => ({ ok: false, unavailable: "failure", message })

/** The owner queues as many commands as it may: refused at once, not held until the command timeout. */
export const overloaded = (limit: number): Outcome => ({
  ok: false,
  unavailable: "overloaded",
  message: `the node deciding this command has ${limit} commands queued, as many as it takes; retry shortly`
})

export const accepted = <S, E, Err>(outcome: Outcome): Effect.Effect<Accepted<S, E>, Err | HostUnavailable> => {
  if (outcome.ok) {
    return Effect.succeed({
      seq: outcome.seq,
      state: outcome.state as S,
      events: outcome.events as ReadonlyArray<E>,
      duplicate: outcome.duplicate,
      position: outcome.position
    })
  }
  if ("rejected" in outcome) return Effect.fail(outcome.rejected as Err)
  return Effect.fail(new HostUnavailable({ reason: outcome.unavailable, message: outcome.message }))
}

export const toReply = (kind: AnyActorKind, outcome: Outcome): Reply => {
  if (outcome.ok) {
    return {
      ok: true,
      seq: outcome.seq,
      state: Schema.encodeSync(kind.state)(outcome.state),
      events: outcome.events.map((e) => encodeEvent(kind, e)),
      duplicate: outcome.duplicate,
      position: outcome.position ?? null
    }
  }
  if ("rejected" in outcome) return { ok: false, rejected: Schema.encodeSync(kind.errors)(outcome.rejected) }
  return outcome
}

export const fromReply = (kind: AnyActorKind, reply: Reply): Outcome => {
  if (reply.ok) {
    return {
      ok: true,
      seq: reply.seq,
      state: Schema.decodeUnknownSync(kind.state)(reply.state),
      events: reply.events.map((e) => decodeEvent(kind, e.type, e.payload)),
      duplicate: reply.duplicate,
      position: reply.position ?? undefined
    }
  }
  if ("rejected" in reply) return { ok: false, rejected: Schema.decodeUnknownSync(kind.errors)(reply.rejected) }
  return reply
}
