/**
 * Whose a request and a record are. A request acts for a person: the signed-in person, or a key's
 * creator (spec 5 rules 4 and 6). What a person's requests make is theirs alone, whatever their
 * role, Owners and Admins included: their conversations, their runs with their replies and
 * transcripts, their A2A tasks, their notices. Another person's is answered as one that never was,
 * so its id cannot be probed. Every capability that reads or acts on such a record decides whose
 * it is here (`ownRecord`, or `isOwn` where the person is already known). A turn is the one
 * exception: the conversation actor's decider refuses another person's turn
 * (`actors/conversation/decide.ts`), since the turn writes through it anyway.
 */
import { Effect } from "effect"
import { OPERATOR } from "../../actors/apikey/purposes.ts"
import { accessFacts } from "../identity/Auth.ts"
import type { Invocation } from "./Capability.ts"
import { Forbidden } from "../platform/Errors.ts"

const noPrincipal = new Forbidden({
  reason: "no_principal",
  message: "this request resolves to no person: the assistant acts for a person, and a key acts for its creator while they are a member of the organization"
})

/** The person a request acts for: the signed-in person, or the key's creator while still a member
 * (the checkpoint checks a key's own role, never its creator's standing). */
export const personOf = (invocation: Invocation) =>
  Effect.gen(function* () {
    const { attributedTo, credential } = invocation.principal
    if (attributedTo === null || attributedTo === OPERATOR) return yield* noPrincipal
    if (credential === "api_key") {
      const { standing } = yield* accessFacts(invocation.orgId!, invocation.workspaceId, attributedTo, null)
      if (standing.orgRole === null) return yield* noPrincipal
    }
    return attributedTo
  })

/** A record that belongs to one person. */
export interface Owned {
  /** The person whose it is. */
  readonly userId: string
}

/** Whose is this: true when the record exists and is `person`'s. */
export const isOwn = <A extends Owned>(record: A | undefined, person: string): record is A => record !== undefined && record.userId === person

/**
 * The record `find` reads, when it is the caller's person's; otherwise (none, or another person's)
 * the capability's own not-found, the same for both.
 */
export const ownRecord = <A extends Owned, E, R, N>(invocation: Invocation, find: Effect.Effect<A | undefined, E, R>, notFound: () => N) =>
  Effect.gen(function* () {
    const person = yield* personOf(invocation)
    const record = yield* find
    if (!isOwn(record, person)) return yield* Effect.fail(notFound())
    return record
  })
