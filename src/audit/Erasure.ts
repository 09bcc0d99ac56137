/**
 * `person.erase` (docs/audit.md, "Erasure by crypto-shredding"): an Owner erases a member of their
 * organization, or a person erases themself. The person's data keys are destroyed first, then the
 * erasure is recorded on the log; a retry after a failed record destroys nothing more and records it.
 */
import { Clock, Effect } from "effect"
import { AuditActor } from "../../actors/audit/actor.ts"
import { PersonErased } from "../../actors/audit/events.ts"
import { encodeEvent, keyOf } from "../../actors/kernel.ts"
import { type AnyCapability, implement } from "../checkpoint/Capability.ts"
import { personOf } from "../checkpoint/Person.ts"
import { memberOrgIds } from "../identity/Queries.ts"
import { Forbidden, NotFound, Unavailable } from "../platform/Errors.ts"
import * as Api from "./Api.ts"
import { AuditLog } from "./AuditLog.ts"
import { destroyPersonKeys } from "./PersonalData.ts"

export const erasePerson = implement(Api.erasePerson, (invocation, input) =>
  Effect.gen(function* () {
    const caller = yield* personOf(invocation)
    const self = caller === input.userId
    if (!self && !invocation.roles.includes("org:owner")) {
      return yield* new Forbidden({ reason: "not_owner", message: "only an organization Owner erases another person" })
    }
    const orgIds = yield* memberOrgIds(input.userId)
    // an Owner erases people of their own organization; anyone else is not there for them
    if (!orgIds.includes(invocation.orgId!)) return yield* new NotFound({ reason: "person_not_found", message: `no person ${input.userId} in this organization` })
    const keysDestroyed = yield* destroyPersonKeys(input.userId)
    const erasureId = invocation.newId("era")
    const { type, payload } = encodeEvent(AuditActor, new PersonErased({ erasureId, userId: input.userId, orgIds, keysDestroyed }))
    const at = new Date(yield* Clock.currentTimeMillis).toISOString()
    yield* (yield* AuditLog).append({ key: keyOf(AuditActor, erasureId), seq: 1, firstSeq: 1, type, payload, at, commandId: erasureId, actor: invocation.meta.actor })
      .pipe(Effect.mapError((e) => new Unavailable({ message: `the erasure of ${input.userId} was done but not recorded: ${e.message}; erase again to record it` })))
    return { erasureId, userId: input.userId, keysDestroyed }
  })
)

export const erasureCapabilities: ReadonlyArray<AnyCapability> = [erasePerson]
