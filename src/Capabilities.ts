/**
 * Every action is a capability, and every invocation passes one checkpoint, `invoke`:
 * authenticate, check the path's scope, resolve the role, validate the input, run, then record the
 * audit event (which is also the metering record). REST routes, MCP tools and agent tools are all
 * derived from the one registry, so the surfaces cannot drift.
 */
import { Clock, Context, Effect, Either, ParseResult, Schema } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { auditEvent } from "../actors/audit/events.ts"
import { AuditActor } from "../actors/audit/actor.ts"
import { OPERATOR } from "../actors/apikey/purposes.ts"
import { type CommandMeta, keyOf } from "../actors/kernel.ts"
import { ActorHost, type ActorHostService, HostUnavailable } from "../streams/ActorHost.ts"
import { EventLog } from "../streams/EventLog.ts"
import { addPosition, CurrentReadFence, parsePositions, type ReadFence } from "../streams/ReadFence.ts"

export { formatPositions } from "../streams/ReadFence.ts"
import { AccessCache } from "./AccessCache.ts"
import { newPublicId } from "./ApiKeyToken.ts"
import { AuditLog } from "./AuditLog.ts"
import { accessFacts, actorOf, authenticate, customRoleGrants, findPlace, type OrgSecurity, type Principal, slugsOf, type Standing } from "./Auth.ts"
import { BadRequest, badInputTags, Forbidden, NotFound, Unavailable } from "./Errors.ts"
import { bindIdempotencyKey, requestDigest } from "./IdempotencyKeys.ts"
import { MAX_JSON_DEPTH, tooDeepMessage } from "./JsonDepth.ts"
import { checkEntitlement, entitled, packsOf } from "./packs/Entitlement.ts"

/** `playbook`: an automation's run; it may invoke what the agent surface offers, and what lists it
 * (a turn: `ask_assistant`) (docs/decisions.md). */
export type Surface = "api" | "mcp" | "agent" | "a2a" | "playbook"

/** Whether the capability is reachable on the surface. */
export const offeredOn = (capability: AnyCapability, surface: Surface): boolean =>
  capability.surfaces.includes(surface) || (surface === "playbook" && capability.surfaces.includes("agent"))

export type Role = "org:owner" | "org:member" | "workspace:admin" | "workspace:member" | "workspace:viewer"

/** Who may invoke a capability: built-in roles, or `person`: any signed-in person (a session or a
 * CLI login) acting on themselves or wherever they are a member. */
export type Grant = Role | "person"

/** What a capability's handler knows about the invocation it serves. */
export interface Invocation {
  readonly invocationId: string
  readonly capability: string
  readonly surface: Surface
  readonly principal: Principal
  /** The roles the caller holds where the capability acts (empty for machine purposes and for a
   * person acting on themselves). */
  readonly roles: ReadonlyArray<Role>
  /** The organization it acts in; null only for a session acting on itself. */
  readonly orgId: string | null
  /** The workspace the path names; null for capabilities outside a workspace. */
  readonly workspaceId: string | null
  /** ISO 8601 time of the invocation; commands carry it. */
  readonly at: string
  /** Metadata for the invocation's command; its id is stable under an idempotency key. */
  readonly meta: CommandMeta
  /** A new public id; the same ids again when the same idempotency key is replayed. */
  readonly newId: (prefix: string) => string
  /** The address of the client that sent the call over HTTP; null on other paths (an agent's tool call). */
  readonly clientAddress: string | null
}

export interface Capability<I, O, R> {
  /** Dotted name, e.g. `node.create`. */
  readonly name: string
  readonly description: string
  /**
   * `workspace`: acts in the workspace `/v1/{orgSlug}/{workspaceSlug}/...` names; `organization`:
   * acts on that path's organization (any of its workspaces may be named); `principal`: on the
   * caller itself, with no organization in the path.
   */
  readonly scope: "workspace" | "organization" | "principal"
  /** The REST route under `/v1/{orgSlug}/{workspaceSlug}/`, when the spec fixes one; otherwise
   * `POST` on the name with `/` for `.`. */
  readonly rest?: { readonly method: "post" | "del"; readonly path: string }
  /** Only a person may invoke it: a signed-in session or a CLI login, never a key (spec 5 rule 10). */
  readonly requiresPerson?: boolean
  /** Machine purposes allowed to call it (spec 5 rule 8); a host or telemetry key may call nothing
   * else, and nobody else may call a capability that lists them unless a role allows it. */
  readonly machines?: ReadonlyArray<"host" | "telemetry">
  readonly input: Schema.Schema<I, any>
  readonly output: Schema.Schema<O, any>
  readonly surfaces: ReadonlyArray<Surface>
  readonly roles: ReadonlyArray<Grant>
  readonly sensitivity: "low" | "medium" | "high"
  readonly mutating: boolean
  /** Whether a success may change who may do what (keys, members, roles, security settings), so
   * this node's access cache drops what it kept of the organization; default: `mutating`. */
  readonly changesAccess?: boolean
  readonly destructive: boolean
  readonly needsApproval: boolean
  /** `builtin`, or the id of the capability pack that claims it. */
  readonly claimedBy: string
  readonly handler: (invocation: Invocation, input: I) => Effect.Effect<O, unknown, R>
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCapability = Capability<any, any, any>

export const defineCapability = <I, O, R>(capability: Capability<I, O, R>): Capability<I, O, R> => capability

/** A capability's REST route: its method and its path under `/v1/{orgSlug}/{workspaceSlug}/`
 * (or under `/v1/` for capabilities acting on the caller): the spec's fixed path, else the name
 * with `/` for `.`. */
export const restRouteOf = (capability: AnyCapability): { readonly method: "post" | "del"; readonly path: string } =>
  capability.rest ?? { method: "post", path: capability.name.replaceAll(".", "/") }

export interface Registry {
  readonly all: ReadonlyArray<AnyCapability>
  readonly byName: ReadonlyMap<string, AnyCapability>
  /** `<method> <path>` -> capability name, for routes acting on the caller (`/v1/<path>`). */
  readonly principalRoutes: ReadonlyMap<string, string>
  /** `<method> <path>` -> capability name, for routes under `/v1/{orgSlug}/{workspaceSlug}/`. */
  readonly placeRoutes: ReadonlyMap<string, string>
}

export const makeRegistry = (capabilities: ReadonlyArray<AnyCapability>): Registry => {
  const byName = new Map<string, AnyCapability>()
  const principalRoutes = new Map<string, string>()
  const placeRoutes = new Map<string, string>()
  for (const c of capabilities) {
    if (byName.has(c.name)) throw new Error(`capability ${c.name} is defined twice`)
    byName.set(c.name, c)
    const route = restRouteOf(c)
    const routes = c.scope === "principal" ? principalRoutes : placeRoutes
    const key = `${route.method} ${route.path}`
    if (routes.has(key)) throw new Error(`capabilities ${routes.get(key)} and ${c.name} share the route ${key}`)
    routes.set(key, c.name)
  }
  return { all: capabilities, byName, principalRoutes, placeRoutes }
}

export class Capabilities extends Context.Tag("svc/Capabilities")<Capabilities, Registry>() {}

/** Told what the checkpoint admitted, as it learns it: the gateway logs it with the request. */
export interface InvocationTrace {
  capability: string | undefined
  invocationId: string | undefined
}

export interface InvokeRequest<E> {
  readonly authorization: string | undefined
  /** The `Cookie` header: a browser session, used when there is no Authorization header. */
  readonly cookie?: string | undefined
  readonly surface: Surface
  /** The capability's name (undefined: none); unknown on this surface is 404 `unknown_capability`, after authentication. */
  readonly capability: string | undefined
  /** The slugs a route names; null on routes without them, where a credential's own place applies. */
  readonly path: { readonly orgSlug: string; readonly workspaceSlug: string } | null
  /** The raw input, read only once the caller is known to be allowed (a body is not parsed for a stranger). */
  readonly input: Effect.Effect<unknown, E>
  /** A caller's retry key: the same key gives the same command id and the same generated ids. */
  readonly idempotencyKey?: string | undefined
  /** Already authenticated (the agent's tool calls act as the turn's caller): no credential is read. */
  readonly principal?: Principal
  /** The `Svc-Position` header: log positions of earlier writes that this call's reads must see. */
  readonly position?: string | undefined
  /** Receives the log positions of this call's writes (for the `Svc-Position` answer header). */
  readonly written?: Map<number, number>
  /** The address of the client on the other end of the connection. */
  readonly clientAddress?: string | null
  readonly trace?: InvocationTrace
}

/** How long a read waits for the read models to pass the writes it must see (then 503, retryable). */
export const READ_FENCE_TIMEOUT_MS = 5_000

/** The checkpoint. Succeeds with the capability's encoded output. */
export const invoke = <E>(request: InvokeRequest<E>) =>
  Effect.flatMap(ActorHost, (host) => {
    // every read of the call, authentication's included, sees what this node acknowledged before it
    const fence = makeFence(host, new Map(host.unprojected()))
    return Effect.locally(checkpoint(request, fence), CurrentReadFence, fence)
  }).pipe(
    // no stack trace: capturing one per request cost twice the rest of the span (bench/auth.ts)
    Effect.withSpan("Capabilities.invoke", { attributes: { capability: request.capability, surface: request.surface }, captureStackTrace: false })
  )

const checkpoint = <E>(request: InvokeRequest<E>, fence: ReadFence) =>
  Effect.gen(function* () {
    const principal = request.principal ?? (yield* authenticate({ authorization: request.authorization, cookie: request.cookie }))
    const registry = yield* Capabilities
    const accessCache = yield* AccessCache
    const capability = request.capability === undefined ? undefined : registry.byName.get(request.capability)
    // a REST route names a workspace exactly when the capability acts in an organization or workspace
    const misrouted = capability !== undefined && request.surface === "api" && (capability.scope !== "principal") !== (request.path !== null)
    if (capability === undefined || !offeredOn(capability, request.surface) || misrouted) {
      return yield* new NotFound({ reason: "unknown_capability", message: `no capability ${request.capability} on the ${request.surface} surface` })
    }
    const machineAllowed = yield* checkPurpose(principal, capability)
    const place = yield* resolveScope(principal, capability, request.path)
    const now = yield* Clock.currentTimeMillis
    const roles = machineAllowed ? [] : yield* authorize(principal, capability, place, now).pipe(
      // AccessCache: a refusal is decided on fresh facts next time (once the caller's SSO sign-in has landed, say)
      Effect.tapError(() => Effect.sync(() => { if (place.orgId !== null) accessCache.invalidateOrg(place.orgId) }))
    )
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
    const outcome = yield* capability.handler(invocation, input).pipe(
      Effect.mapError((e) => (e instanceof HostUnavailable ? new Unavailable({ message: e.message }) : e)),
      Effect.either
    )
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
      if (!badInputTags.has(tag)) yield* recordInvocation(invocation, started, yield* Clock.currentTimeMillis, tag)
      return yield* Effect.fail(outcome.left)
    }
    yield* recordInvocation(invocation, started, yield* Clock.currentTimeMillis, undefined)
    if (request.written !== undefined) for (const [partition, offset] of fence.written) addPosition(request.written, { partition, offset })
    return yield* Schema.encode(capability.output)(outcome.right).pipe(Effect.orDie)
  })

/**
 * The positions the caller sent back join what the call's reads must see (with every write this
 * node acknowledged that the read models may not hold yet). Awaited lazily, by the first
 * read-model query.
 */
const addSentPositions = (request: InvokeRequest<unknown>, fence: ReadFence) =>
  Effect.gen(function* () {
    if (request.position === undefined) return
    const sent = parsePositions(request.position, (yield* EventLog).partitions)
    if (sent === undefined) {
      return yield* new BadRequest({ reason: "invalid_position", message: "Svc-Position must be partition:offset pairs, comma separated, as a write's answer gave them" })
    }
    for (const [partition, offset] of sent) addPosition(fence.positions, { partition, offset })
  })

/**
 * The fence of everything run on a node's runtime outside `invoke` (sign-in, device login, SSO,
 * a turn's process, operator tools): each read waits for what the node has acknowledged by then.
 */
export const nodeFence = (host: ActorHostService): ReadFence => ({
  get positions() {
    return new Map(host.unprojected())
  },
  passed: new Map(),
  written: new Map(),
  await: (wanted) => host.awaitProjected(wanted, READ_FENCE_TIMEOUT_MS)
})

/**
 * Starts what a capability goes on doing after it answers (a turn, a task's follower): it outlives
 * the call, and each of its reads waits for what the node has acknowledged by then, like any
 * process of the node's.
 */
export const startInBackground = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  // interruptible whatever region starts it: its own timeouts must work
  Effect.flatMap(ActorHost, (host) => Effect.forkDaemon(Effect.interruptible(Effect.locally(effect, CurrentReadFence, nodeFence(host)))))

export const makeFence = (host: ActorHostService, positions: Map<number, number>): ReadFence => ({
  positions,
  passed: new Map(),
  written: new Map(),
  await: (wanted) => host.awaitProjected(wanted, READ_FENCE_TIMEOUT_MS)
})

const forbidden = (reason: string, message: string) => new Forbidden({ reason, message })

/** How a credential's purpose decides a call (rules 8 and 9): refused outright, granted by a machine
 * purpose itself (host and telemetry keys hold no role), or left to the caller's roles. */
type PurposeDecision =
  | { readonly _tag: "refused"; readonly error: Forbidden }
  | { readonly _tag: "machine" }
  | { readonly _tag: "roles" }

const byRoles: PurposeDecision = { _tag: "roles" }

const purposeDecision = (principal: Principal, capability: AnyCapability): PurposeDecision => {
  const refused = (reason: string, message: string): PurposeDecision => ({ _tag: "refused", error: forbidden(reason, message) })
  switch (principal.credential) {
    case "unknown_purpose":
      return refused("unknown_purpose", `credential purpose '${principal.purpose}' is not recognised`)
    case "host_key":
    case "telemetry_key": {
      const machine = principal.credential === "host_key" ? "host" : "telemetry"
      return capability.machines?.includes(machine) === true
        ? { _tag: "machine" }
        : refused("purpose_not_allowed", `a ${principal.purpose} credential may not invoke ${capability.name}`)
    }
    case "gateway_key":
      return !capability.surfaces.includes("mcp") || capability.mutating || capability.sensitivity === "high"
        ? refused("purpose_not_allowed", `a ${principal.purpose} credential may invoke only non-mutating MCP capabilities that are not high-sensitivity`)
        : byRoles
    case "api_key":
      return capability.requiresPerson === true
        ? refused("session_required", `${capability.name} needs a signed-in session or a CLI login; an API key cannot call it`)
        : byRoles
    case "session":
    case "cli_login":
    case "playbook":
      return byRoles
  }
}

/**
 * Rules 8 and 9, before any role is resolved: what a machine credential may call, whether the
 * capability needs a person, and no unknown purpose at all. True when a machine purpose itself
 * grants the call.
 */
const checkPurpose = (principal: Principal, capability: AnyCapability) => {
  const decision = purposeDecision(principal, capability)
  return decision._tag === "refused" ? Effect.fail(decision.error) : Effect.succeed(decision._tag === "machine")
}

/** A person acts with their live memberships: a session, a CLI login, or an automation's run as them. */
const isPerson = (principal: Principal) =>
  principal.credential === "session" || principal.credential === "cli_login" || principal.credential === "playbook"

/** Whether the capability's grants include what the caller holds: `person` for a person, else one of the roles. */
const rolesAllow = (principal: Principal, capability: AnyCapability, roles: ReadonlyArray<Role>): boolean =>
  capability.roles.some((grant) => (grant === "person" ? isPerson(principal) : roles.includes(grant)))

/**
 * Whether the checkpoint admits the caller, holding `roles` where the capability acts, to the
 * capability: the purpose rules, then the roles (the place and the entitlement of packs are checked
 * apart). What `access.get` and the agent's tools are decided by.
 */
export const admits = (principal: Principal, capability: AnyCapability, roles: ReadonlyArray<Role>): boolean => {
  const decision = purposeDecision(principal, capability)
  return decision._tag === "machine" || (decision._tag === "roles" && rolesAllow(principal, capability, roles))
}

interface ResolvedPlace {
  /** Null only for a session calling a capability that acts on the caller itself. */
  readonly orgId: string | null
  readonly workspaceId: string | null
}

/** Rule 5: a credential names only its own organization (and, for a workspace credential, its own workspace). */
const resolveScope = (principal: Principal, capability: AnyCapability, path: InvokeRequest<unknown>["path"]) =>
  Effect.gen(function* () {
    if (capability.scope === "principal") return { orgId: principal.orgId, workspaceId: principal.workspaceId } satisfies ResolvedPlace
    if (path === null) {
      if (principal.orgId === null || (capability.scope === "workspace" && principal.workspaceId === null)) {
        return yield* new BadRequest({ reason: "workspace_required", message: `${capability.name} acts in a workspace: name it as <orgSlug>/<workspaceSlug>` })
      }
      return { orgId: principal.orgId, workspaceId: principal.workspaceId } satisfies ResolvedPlace
    }
    const named = `${path.orgSlug}/${path.workspaceSlug}`
    if (principal.orgId !== null) {
      const own = yield* slugsOf(principal.orgId, principal.workspaceId)
      const [orgSlug, workspaceSlug] = own.split("/")
      if (path.orgSlug !== orgSlug || (workspaceSlug !== undefined && path.workspaceSlug !== workspaceSlug)) {
        return yield* forbidden(
          "key_scope_mismatch",
          `the path names ${named}, but this credential belongs to ${workspaceSlug === undefined ? `organization ${orgSlug}` : own}`
        )
      }
    }
    const place = yield* findPlace(path.orgSlug, path.workspaceSlug)
    if (place === undefined) return yield* new NotFound({ reason: "workspace_not_found", message: `no workspace ${named}` })
    return { orgId: place.orgId, workspaceId: place.workspaceId } satisfies ResolvedPlace
  })

/** Roles no key may hold, even through a custom role (rule 4). */
const PERSON_ONLY_ROLES: ReadonlySet<string> = new Set(["org:owner", "workspace:admin"])

/**
 * Rule 7 on organization and workspace routes, then the role resolver (rules 2 to 6): a key acts
 * with its own role, a person (session or CLI login) with their live memberships.
 */
const authorize = (principal: Principal, capability: AnyCapability, place: ResolvedPlace, now: number) =>
  Effect.gen(function* () {
    if (place.orgId === null) {
      // a session acting on itself (its password, its two-factor): no organization, no roles
      if (capability.scope === "principal" && principal.credential === "session" && capability.roles.includes("person")) return []
      return yield* new Forbidden({ message: `${capability.name} needs an organization` })
    }
    const person = isPerson(principal)
    const { security, standing } = yield* accessFacts(place.orgId, place.workspaceId, principal.attributedTo, principal.sso?.providerId ?? null)
    // a CLI login's person is rechecked on every request: leaving the organization ends its use
    if (person && standing.orgRole === null) {
      return yield* forbidden("not_a_member", "the signed-in person is not a member of this organization")
    }
    if (capability.scope !== "principal") {
      const owner = standing.orgRole === "owner"
      // operator-issued machine credentials have no person behind them to check
      if (security.requireSso && !owner && principal.attributedTo !== OPERATOR) {
        const fromVerifiedProvider = principal.credential === "session"
          ? principal.sso?.orgId === place.orgId && standing.sessionProviderVerified
          : standing.ssoLinked
        if (!fromVerifiedProvider) {
          return yield* forbidden(
            "sso_required",
            principal.credential === "session"
              ? "this organization requires signing in through one of its verified SSO providers"
              : "this organization requires SSO, and this credential's creator has not signed in through a verified SSO provider"
          )
        }
      }
      if (principal.credential === "session" && security.requireMfa && !standing.mfa
        && (security.mfaGraceEndsAt === null || security.mfaGraceEndsAt.getTime() <= now)) {
        return yield* forbidden("mfa_required", "this organization requires two-factor authentication; set it up to continue")
      }
    }
    const roles = yield* rolesIn(principal, { orgId: place.orgId, workspaceId: place.workspaceId }, security, standing)
    if (!rolesAllow(principal, capability, roles)) {
      return yield* new Forbidden({ message: `this credential (role ${roles.join(", ") || "none"}) may not invoke ${capability.name}` })
    }
    return roles
  })

/** The roles the caller holds in a place of an organization: a person's live memberships, a key's own role. */
const rolesIn = (principal: Principal, place: ResolvedPlace & { readonly orgId: string }, security: OrgSecurity, standing: Standing) =>
  isPerson(principal) ? Effect.succeed(personRoles(standing)) : keyRoles(principal, place, security)

/** The roles a credential holds in its own place (its workspace, or its organization); none without one. */
const ownRoles = (principal: Principal) => {
  const { orgId, workspaceId } = principal
  if (orgId === null) return Effect.succeed<ReadonlyArray<Role>>([])
  return Effect.flatMap(accessFacts(orgId, workspaceId, principal.attributedTo, principal.sso?.providerId ?? null), ({ security, standing }) =>
    rolesIn(principal, { orgId, workspaceId }, security, standing))
}

/**
 * The capabilities a caller holding `roles` may invoke on `surface`: offered there, claimed by a
 * pack the organization enabled (`packs`), and admitted by the purpose and role rules (`admits`).
 * What `access.get` states and MCP's `tools/list` lists.
 */
export const invocable = (registry: Registry, principal: Principal, roles: ReadonlyArray<Role>, packs: ReadonlySet<string>, surface: Surface) =>
  registry.all.filter((c) => offeredOn(c, surface) && entitled(c, packs) && admits(principal, c, roles))

/** `invocable` for a credential in its own place, as it stands now. */
export const invocableByCredential = (principal: Principal, surface: Surface) =>
  Effect.gen(function* () {
    const registry = yield* Capabilities
    const roles = yield* ownRoles(principal)
    return invocable(registry, principal, roles, yield* packsOf(principal.orgId), surface)
  })

const personRoles = (standing: Standing): ReadonlyArray<Role> => [
  ...(standing.orgRole === null ? [] : [`org:${standing.orgRole}` as Role]),
  ...(standing.workspaceRole === null ? [] : [`workspace:${standing.workspaceRole}` as Role])
]

const keyRoles = (principal: Principal, place: ResolvedPlace, security: OrgSecurity) =>
  Effect.gen(function* () {
    const scope = principal.workspaceId === null ? "organization" : "workspace"
    const inOwnPlace = principal.workspaceId === null || principal.workspaceId === place.workspaceId
    if (!inOwnPlace) return []
    if (principal.customRole !== null && security.plan === "enterprise" && place.orgId !== null) {
      const grants = yield* customRoleGrants(place.orgId, principal.customRole, scope)
      if (grants !== undefined) return grants.filter((g) => !PERSON_ONLY_ROLES.has(g)) as ReadonlyArray<Role>
    }
    return scope === "organization" ? ["org:member" as const] : ["workspace:member" as const]
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
