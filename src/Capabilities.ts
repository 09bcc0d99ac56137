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
import { type CommandMeta, encodeEvent, keyOf } from "../actors/kernel.ts"
import { HostUnavailable } from "../streams/ActorHost.ts"
import { EventLog } from "../streams/EventLog.ts"
import { newPublicId } from "./ApiKeyToken.ts"
import { authenticate, findPlace, type Principal, slugsOf } from "./Auth.ts"
import { BadRequest, badInputTags, Forbidden, NotFound, Unavailable } from "./Errors.ts"

export type Surface = "api" | "mcp" | "agent"

export type Role = "org:owner" | "org:member" | "workspace:admin" | "workspace:member" | "workspace:viewer"

/** What a capability's handler knows about the invocation it serves. */
export interface Invocation {
  readonly invocationId: string
  readonly capability: string
  readonly surface: Surface
  readonly principal: Principal
  readonly orgId: string
  /** The workspace the path names; null for capabilities outside a workspace. */
  readonly workspaceId: string | null
  /** ISO 8601 time of the invocation; commands carry it. */
  readonly at: string
  /** Metadata for the invocation's command; its id is stable under an idempotency key. */
  readonly meta: CommandMeta
  /** A new public id; the same ids again when the same idempotency key is replayed. */
  readonly newId: (prefix: string) => string
}

export interface Capability<I, O, R> {
  /** Dotted name, e.g. `node.create`. */
  readonly name: string
  readonly description: string
  /** `workspace`: invoked on `/v1/{orgSlug}/{workspaceSlug}/...`; `principal`: on the caller itself. */
  readonly scope: "workspace" | "principal"
  readonly input: Schema.Schema<I, any>
  readonly output: Schema.Schema<O, any>
  readonly surfaces: ReadonlyArray<Surface>
  readonly roles: ReadonlyArray<Role>
  readonly sensitivity: "low" | "medium" | "high"
  readonly mutating: boolean
  readonly destructive: boolean
  readonly needsApproval: boolean
  /** `builtin`, or the id of the capability pack that claims it. */
  readonly claimedBy: string
  readonly handler: (invocation: Invocation, input: I) => Effect.Effect<O, unknown, R>
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCapability = Capability<any, any, any>

export const defineCapability = <I, O, R>(capability: Capability<I, O, R>): Capability<I, O, R> => capability

/** The capability a REST path under `/v1/{orgSlug}/{workspaceSlug}/` names: its slashes are the name's dots. */
export const nameOfRestPath = (path: string): string | undefined => (path.includes(".") ? undefined : path.replaceAll("/", "."))

export interface Registry {
  readonly all: ReadonlyArray<AnyCapability>
  readonly byName: ReadonlyMap<string, AnyCapability>
}

export const makeRegistry = (capabilities: ReadonlyArray<AnyCapability>): Registry => {
  const byName = new Map<string, AnyCapability>()
  for (const c of capabilities) {
    if (byName.has(c.name)) throw new Error(`capability ${c.name} is defined twice`)
    byName.set(c.name, c)
  }
  return { all: capabilities, byName }
}

export class Capabilities extends Context.Tag("svc/Capabilities")<Capabilities, Registry>() {}

/** The roles a principal holds in the place a path names. A key acts with its own role, never its creator's. */
const rolesOf = (principal: Principal, workspaceId: string | null): ReadonlyArray<Role> =>
  principal.workspaceId === null ? ["org:member"] : principal.workspaceId === workspaceId ? ["workspace:member"] : []

export interface InvokeRequest<E> {
  readonly authorization: string | undefined
  readonly surface: Surface
  /** The capability's name (undefined: none); unknown on this surface is 404 `unknown_capability`, after authentication. */
  readonly capability: string | undefined
  /** The slugs a workspace-scoped route names. */
  readonly path: { readonly orgSlug: string; readonly workspaceSlug: string } | null
  /** The raw input, read only once the caller is known to be allowed (a body is not parsed for a stranger). */
  readonly input: Effect.Effect<unknown, E>
  /** A caller's retry key: the same key gives the same command id and the same generated ids. */
  readonly idempotencyKey?: string | undefined
}

/** The checkpoint. Succeeds with the capability's encoded output. */
export const invoke = <E>(request: InvokeRequest<E>) =>
  Effect.gen(function* () {
    const principal = yield* authenticate(request.authorization)
    const registry = yield* Capabilities
    const capability = request.capability === undefined ? undefined : registry.byName.get(request.capability)
    // a REST route names a workspace exactly when the capability lives in one
    const misrouted = capability !== undefined && request.surface === "api" && (capability.scope === "workspace") !== (request.path !== null)
    if (capability === undefined || !capability.surfaces.includes(request.surface) || misrouted) {
      return yield* new NotFound({ reason: "unknown_capability", message: `no capability ${request.capability} on the ${request.surface} surface` })
    }
    const place = yield* resolveScope(principal, capability, request.path)
    const roles = rolesOf(principal, place.workspaceId)
    if (!capability.roles.some((r) => roles.includes(r))) {
      return yield* new Forbidden({ message: `this credential (role ${roles.join(", ") || "none"}) may not invoke ${capability.name}` })
    }
    const raw = yield* request.input
    const polluted = prototypeKeyIn(raw, "input")
    if (polluted !== undefined) {
      return yield* new BadRequest({ reason: "invalid_input", message: `the name __proto__ is not allowed (at ${polluted})` })
    }
    const input = yield* Schema.decodeUnknown(capability.input, { onExcessProperty: "error" })(raw).pipe(
      Effect.mapError((error) => new BadRequest({ reason: "invalid_input", message: ParseResult.TreeFormatter.formatErrorSync(error) }))
    )
    const started = yield* Clock.currentTimeMillis
    const at = new Date(started).toISOString()
    const seed = request.idempotencyKey === undefined
      ? undefined
      : createHash("sha256").update(`${principal.apiKeyId}\n${capability.name}\n${request.idempotencyKey}`).digest("hex")
    let ids = 0
    const invocation: Invocation = {
      invocationId: newPublicId("inv"),
      capability: capability.name,
      surface: request.surface,
      principal,
      orgId: place.orgId,
      workspaceId: place.workspaceId,
      at,
      meta: { commandId: seed === undefined ? randomUUID() : `idem_${seed.slice(0, 40)}`, at, actor: `key:${principal.apiKeyId}` },
      newId: (prefix) =>
        seed === undefined
          ? newPublicId(prefix)
          : `${prefix}_${createHash("sha256").update(`${seed}\n${prefix}\n${ids++}`).digest("hex").slice(0, 32)}`
    }
    const outcome = yield* capability.handler(invocation, input).pipe(
      Effect.mapError((e) => (e instanceof HostUnavailable ? new Unavailable({ message: e.message }) : e)),
      Effect.either
    )
    if (Either.isLeft(outcome)) {
      const tag = (outcome.left as { readonly _tag?: string })._tag ?? "Error"
      if (!badInputTags.has(tag)) yield* recordInvocation(invocation, started, yield* Clock.currentTimeMillis, tag)
      return yield* Effect.fail(outcome.left)
    }
    yield* recordInvocation(invocation, started, yield* Clock.currentTimeMillis, undefined)
    return yield* Schema.encode(capability.output)(outcome.right).pipe(Effect.orDie)
  }).pipe(Effect.withSpan("Capabilities.invoke", { attributes: { capability: request.capability, surface: request.surface } }))

/**
 * Where a `__proto__` key sits in parsed JSON, if anywhere. JSON.parse makes it an own property,
 * but record decoding would assign it as the prototype and silently drop it.
 */
const prototypeKeyIn = (value: unknown, at: string): string | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  for (const [key, inner] of Object.entries(value)) {
    if (key === "__proto__") return at
    const found = prototypeKeyIn(inner, `${at}.${key}`)
    if (found !== undefined) return found
  }
  return undefined
}

/** Rule 5: a key names only its own organization (and, for a workspace key, its own workspace). */
const resolveScope = (principal: Principal, capability: AnyCapability, path: InvokeRequest<unknown>["path"]) =>
  Effect.gen(function* () {
    if (capability.scope === "principal" || path === null) return { orgId: principal.orgId, workspaceId: principal.workspaceId }
    const own = yield* slugsOf(principal.orgId, principal.workspaceId)
    const [orgSlug, workspaceSlug] = own.split("/")
    const named = `${path.orgSlug}/${path.workspaceSlug}`
    if (path.orgSlug !== orgSlug || (workspaceSlug !== undefined && path.workspaceSlug !== workspaceSlug)) {
      return yield* new Forbidden({
        reason: "key_scope_mismatch",
        message: `the path names ${named}, but this key belongs to ${workspaceSlug === undefined ? `organization ${orgSlug}` : own}`
      })
    }
    const place = yield* findPlace(path.orgSlug, path.workspaceSlug)
    if (place === undefined) return yield* new NotFound({ reason: "workspace_not_found", message: `no workspace ${named}` })
    return { orgId: place.orgId, workspaceId: place.workspaceId }
  })

/** The audit record, which is also the metering record, appended straight to the log: its key is
 * the invocation's own, so this node is its only writer and seq 1 is never contended. */
const recordInvocation = (invocation: Invocation, started: number, finished: number, errorTag: string | undefined) =>
  Effect.gen(function* () {
    const log = yield* EventLog
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
    const event = auditEvent(errorTag === undefined ? { ...common, outcome: "succeeded" } : { ...common, outcome: "failed", errorTag })
    const { type, payload } = encodeEvent(AuditActor, event)
    const key = keyOf(AuditActor, invocation.invocationId)
    yield* log.append(key, [{ key, seq: 1, firstSeq: 1, type, payload, at: invocation.at, commandId: invocation.meta.commandId, actor: invocation.meta.actor }])
  }).pipe(Effect.mapError((e) => new Unavailable({ message: `audit record not written: ${e.message}` })))
