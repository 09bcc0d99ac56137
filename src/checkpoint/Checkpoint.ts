/**
 * Every action is a capability, and every invocation passes one checkpoint, `invoke`:
 * authenticate, check the path's scope, resolve the role, validate the input, run, then record the
 * audit event (which is also the metering record). REST routes, MCP tools and agent tools are all
 * derived from the one registry, so the surfaces cannot drift.
 */
import { Clock, Context, Effect, Either, FiberRef, ParseResult, Schema } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { auditEvent } from "../../actors/audit/events.ts"
import { AuditActor } from "../../actors/audit/actor.ts"
import { keyOf } from "../../actors/kernel.ts"
import { ActorHost, type ActorHostService } from "../../streams/ActorHost.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { addPosition, CurrentReadFence, parsePositions, type Positions, type ReadFence } from "../../streams/ReadFence.ts"

export { formatPositions } from "../../streams/ReadFence.ts"
import { AccessCache, type AccessCacheService, decide, decideNow, type Facts, notAtHand } from "./AccessCache.ts"
import { newPublicId } from "../identity/ApiKeyToken.ts"
import { AuditLog } from "../audit/AuditLog.ts"
import { actorOf, principalOf } from "../identity/Auth.ts"
import { BadRequest, badInputTags, type Forbidden, NotFound, shedTags, type Unauthorized, Unavailable } from "../platform/Errors.ts"
import { bindIdempotencyKey, requestDigest } from "./IdempotencyKeys.ts"
import { MAX_JSON_DEPTH, tooDeepMessage } from "../platform/JsonDepth.ts"
import { checkEntitlement } from "../packs/Entitlement.ts"
import { checkPurpose, placeOf, type ResolvedPlace, rolesOf } from "./Access.ts"
import { READ_FENCE_TIMEOUT_MS } from "./Background.ts"
import { type AnyCapability, Capabilities, type Invocation, type InvokeRequest, offeredOn, type Principal, type Registry, type Role } from "./Capability.ts"
import { orOwnerUnreachable } from "../platform/Failures.ts"

/** The checkpoint. Succeeds with the capability's encoded output. */
export const invoke = <E>(request: InvokeRequest<E>) =>
  Effect.flatMap(Effect.context<ActorHost | Capabilities | AccessCache>(), (context) => {
    const host = Context.get(context, ActorHost)
    // every read of the call, authentication's included, sees what this node acknowledged before it,
    // where the read models can have it: not on a partition that is moving (docs/decisions.md)
    const fence = makeFence(host, host.unprojected())
    const call = Effect.locally(checkpoint(request, fence, Context.get(context, Capabilities), Context.get(context, AccessCache)), CurrentReadFence, fence)
    // a span only for a node that traces (TRACING, or OTEL_* set): without a tracer it is pure cost
    return Effect.withFiberRuntime<Effect.Effect.Success<typeof call>, Effect.Effect.Error<typeof call>, Effect.Effect.Context<typeof call>>((fiber) =>
      fiber.getFiberRef(FiberRef.currentTracerEnabled)
        // no stack trace: capturing one per request cost twice the rest of the span (bench/auth.ts)
        ? Effect.withSpan(call, "Capabilities.invoke", { attributes: { capability: request.capability, surface: request.surface }, captureStackTrace: false })
        : call
    )
  })

/** Whom the access rules admitted, to what, where, holding which roles. */
interface Admitted {
  readonly principal: Principal
  readonly capability: AnyCapability
  readonly place: ResolvedPlace
  readonly roles: ReadonlyArray<Role>
}

interface Refused {
  readonly error: Unauthorized | NotFound | BadRequest | Forbidden
  /** The organization whose cached facts the refusal drops: a refusal by the role rules is decided on fresh facts next time (once the caller's SSO sign-in has landed, say). */
  readonly dropOrg: string | null
}

const refused = (error: Refused["error"], dropOrg: string | null = null) => Either.left<Refused>({ error, dropOrg })

/** The checkpoint's access decision over the facts: authenticate, the capability on its surface, the purpose, the place, the roles. */
const access = (request: InvokeRequest<unknown>, registry: Registry, facts: Facts, now: number): Either.Either<Admitted, Refused> => {
  const caller = request.principal === undefined
    ? principalOf({ authorization: request.authorization, cookie: request.cookie }, facts, now)
    : Either.right(request.principal)
  if (Either.isLeft(caller)) return refused(caller.left)
  const principal = caller.right
  const capability = request.capability === undefined ? undefined : registry.byName.get(request.capability)
  // a REST route names a workspace exactly when the capability acts in an organization or workspace
  const misrouted = capability !== undefined && request.surface === "api" && (capability.scope !== "principal") !== (request.path !== null)
  if (capability === undefined || !offeredOn(capability, request.surface) || misrouted) {
    const asked = request.capability === undefined && request.route !== undefined ? `at ${request.route}` : `${request.capability} on the ${request.surface} surface`
    return refused(new NotFound({ reason: "unknown_capability", message: `no capability ${asked}` }))
  }
  const machineAllowed = checkPurpose(principal, capability)
  if (Either.isLeft(machineAllowed)) return refused(machineAllowed.left)
  const place = placeOf(principal, capability, request.path, facts)
  if (Either.isLeft(place)) return refused(place.left)
  const roles = machineAllowed.right ? Either.right([]) : rolesOf(principal, capability, place.right, now, facts)
  if (Either.isLeft(roles)) return refused(roles.left, place.right.orgId)
  return Either.right({ principal, capability, place: place.right, roles: roles.right })
}

/**
 * A cached caller is decided in plain synchronous code; a caller whose facts are not all kept goes
 * through `decide`, which looks up what is missing (the same rules, the same order).
 */
const checkpoint = <E>(request: InvokeRequest<E>, fence: ReadFence, registry: Registry, accessCache: AccessCacheService) =>
  Effect.clockWith((clock) => {
    const decision = (facts: Facts) => access(request, registry, facts, clock.unsafeCurrentTimeMillis())
    const settle = (result: Either.Either<Admitted, Refused>) => {
      if (Either.isRight(result)) return run(request, fence, accessCache, result.right)
      const { error, dropOrg } = result.left
      if (dropOrg !== null) accessCache.invalidateOrg(dropOrg)
      return Effect.fail(error)
    }
    const known = decideNow(accessCache, decision)
    return known === notAtHand ? Effect.flatMap(decide(decision), settle) : settle(known)
  })

/** The admitted call: entitlement, input, the run, its audit record. */
const run = <E>(request: InvokeRequest<E>, fence: ReadFence, accessCache: AccessCacheService, { capability, place, principal, roles }: Admitted) =>
  Effect.gen(function* () {
    // spec 7.3: a pack's capability only for an organization that installed and enabled the pack
    yield* checkEntitlement(capability, place.orgId)
    const raw = yield* request.input
    const refused = refusedShape(raw)
    if (refused !== undefined) return yield* refused
    const input = yield* Schema.decodeUnknown(capability.input, { onExcessProperty: "error" })(raw).pipe(
      Effect.mapError((error) => new BadRequest({ reason: "invalid_input", message: ParseResult.TreeFormatter.formatErrorSync(error) }))
    )
    yield* addSentPositions(request, fence)
    const started = yield* Clock.currentTimeMillis
    const at = new Date(started).toISOString()
    const seed = request.idempotencyKey === undefined
      ? undefined
      : createHash("sha256").update(`${principal.apiKeyId ?? principal.sessionId}\n${capability.name}\n${request.idempotencyKey}`).digest("hex")
    let ids = 0
    const invocation: Invocation = {
      invocationId: newPublicId("inv"),
      capability: capability.name,
      surface: request.surface,
      principal,
      roles,
      orgId: place.orgId,
      workspaceId: place.workspaceId,
      at,
      meta: { commandId: seed === undefined ? randomUUID() : `idem_${seed.slice(0, 40)}`, at, actor: actorOf(principal) },
      newId: (prefix) =>
        seed === undefined
          ? newPublicId(prefix)
          : `${prefix}_${createHash("sha256").update(`${seed}\n${prefix}\n${ids++}`).digest("hex").slice(0, 32)}`,
      clientAddress: request.clientAddress ?? null
    }
    if (request.trace !== undefined) {
      request.trace.capability = invocation.capability
      request.trace.invocationId = invocation.invocationId
    }
    // the key stands for this write: the same again goes on to replay, another one is refused (a
    // read changes nothing, so it has nothing to replay: its key binds nothing, as Stripe's on GET)
    if (seed !== undefined && capability.mutating) {
      const sent = { orgId: place.orgId, workspaceId: place.workspaceId, input: yield* Schema.encode(capability.input)(input).pipe(Effect.orDie) }
      yield* bindIdempotencyKey(seed, requestDigest(sent), invocation.meta)
    }
    const outcome = yield* capability.handler(invocation, input).pipe(orOwnerUnreachable, Effect.either)
    // AccessCache: what a write changed (a key, a member, a setting) shows at once on this node
    if (capability.changesAccess ?? capability.mutating) {
      const orgId = place.orgId
      const invalidate = capability.scope === "principal" || orgId === null ? accessCache.invalidateAll : () => accessCache.invalidateOrg(orgId)
      invalidate()
      // what a call that began before this write read and kept goes too, once the read models hold it
      if (fence.written.size > 0) void fence.await(new Map(fence.written)).then(invalidate)
    }
    if (Either.isLeft(outcome)) {
      const tag = (outcome.left as { readonly _tag?: string })._tag ?? "Error"
      if (!badInputTags.has(tag) && !shedTags.has(tag)) yield* recordInvocation(invocation, started, yield* Clock.currentTimeMillis, tag)
      return yield* Effect.fail(outcome.left)
    }
    yield* recordInvocation(invocation, started, yield* Clock.currentTimeMillis, undefined)
    if (request.written !== undefined) for (const [partition, offset] of fence.written) addPosition(request.written, { partition, offset })
    return yield* Schema.encode(capability.output)(outcome.right).pipe(Effect.orDie)
  })

/**
 * The positions the caller sent back join what the call's reads must see (beside every write this
 * node acknowledged that the read models may not hold yet). Awaited lazily, by the first
 * read-model query.
 */
const addSentPositions = (request: InvokeRequest<unknown>, fence: ReadFence) => {
  const position = request.position
  if (position === undefined) return Effect.void
  return Effect.flatMap(EventLog, (log) => {
    const sent = parsePositions(position, log.partitions)
    if (sent === undefined) {
      return Effect.fail(new BadRequest({ reason: "invalid_position", message: "Svc-Position must be partition:offset pairs, comma separated, as a write's answer gave them" }))
    }
    for (const [partition, offset] of sent) addPosition(fence.positions, { partition, offset })
    return Effect.void
  })
}

export const makeFence = (host: ActorHostService, acknowledged: Positions): ReadFence => ({
  positions: new Map(),
  acknowledged,
  passed: new Map(),
  written: new Map(),
  await: (wanted) => host.awaitProjected(wanted, READ_FENCE_TIMEOUT_MS),
  awaitAcknowledged: (wanted) => host.awaitSettled(wanted, READ_FENCE_TIMEOUT_MS)
})

/**
 * What the input's shape breaks before it is decoded, whatever surface it came by, walked without
 * recursion: nesting deeper than MAX_JSON_DEPTH (decoding recurses once per level), or a `__proto__`
 * key (JSON.parse makes it an own property, but record decoding would assign it as the prototype
 * and silently drop it).
 */
const refusedShape = (input: unknown): BadRequest | undefined => {
  const pending: Array<readonly [value: unknown, at: string, depth: number]> = [[input, "input", 1]]
  while (pending.length > 0) {
    const [value, at, depth] = pending.pop()!
    // bytes (an upload's files) hold no keys, and listing them one by one costs seconds per megabyte
    if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) continue
    if (depth > MAX_JSON_DEPTH) return new BadRequest({ reason: "json_too_deep", message: `${tooDeepMessage} (at ${at})` })
    for (const [key, inner] of Object.entries(value)) {
      if (key === "__proto__") return new BadRequest({ reason: "invalid_input", message: `the name __proto__ is not allowed (at ${at})` })
      pending.push([inner, `${at}.${key}`, depth + 1])
    }
  }
  return undefined
}

/** The audit record, which is also the metering record, built (and validated) once and appended
 * through the node's audit writer. */
const recordInvocation = (invocation: Invocation, started: number, finished: number, errorTag: string | undefined) =>
  Effect.gen(function* () {
    const audit = yield* AuditLog
    const common = {
      invocationId: invocation.invocationId,
      capability: invocation.capability,
      surface: invocation.surface,
      orgId: invocation.orgId,
      workspaceId: invocation.workspaceId,
      principal: { kind: invocation.principal.credential, apiKeyId: invocation.principal.apiKeyId, userId: invocation.principal.attributedTo },
      durationMs: Math.max(0, Math.round(finished - started)),
      units: 1
    }
    // the constructor validates; its fields are plain JSON, so they are the payload as encoded
    const { _tag: type, ...payload } = auditEvent(errorTag === undefined ? { ...common, outcome: "succeeded" } : { ...common, outcome: "failed", errorTag })
    const key = keyOf(AuditActor, invocation.invocationId)
    yield* audit.append({ key, seq: 1, firstSeq: 1, type, payload, at: invocation.at, commandId: invocation.meta.commandId, actor: invocation.meta.actor })
  }).pipe(Effect.mapError((e) => new Unavailable({ message: `audit record not written: ${e.message}` })))
