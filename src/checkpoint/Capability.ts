/**
 * The capability: what every action is (its contract, scope, surfaces, roles), the registry the
 * REST routes, MCP tools and agent tools are all derived from, and the request `invoke` serves.
 */
import { Context, type Effect, type Schema } from "effect"
import type { CommandMeta } from "../../actors/kernel.ts"
import { type JsonObject, objectSchemaOf } from "./ToolSchemas.ts"

/** Credential kinds of spec 5 rule 8, plus browser sessions (rule 7). */
/** `playbook`: an automation's run, acting for the person it runs as, with their live memberships
 * (like a CLI login, it holds no credential of its own). */
export type CredentialKind = "session" | "cli_login" | "api_key" | "host_key" | "gateway_key" | "telemetry_key" | "unknown_purpose" | "playbook"

/** An authenticated caller. */
export interface Principal {
  readonly credential: CredentialKind
  /** The bearer credential's id (`aky_...`); null for a session. */
  readonly apiKeyId: string | null
  /** The session's id; null for bearer credentials. */
  readonly sessionId: string | null
  /** The credential's organization; null for a session, which acts wherever its person belongs. */
  readonly orgId: string | null
  /** The credential's workspace; null for an organization-level credential or a session. */
  readonly workspaceId: string | null
  /** The person acting: the signed-in user or the CLI login's approver; null for keys. */
  readonly userId: string | null
  /** Who the calls are attributed to: the person, or a key's creator. */
  readonly attributedTo: string
  /** For an enterprise key: the custom role it acts as. */
  readonly customRole: string | null
  /** For a host key: the enrolled machine. */
  readonly machineId: string | null
  /** The `purpose` scope value as presented (for an unknown purpose, what it said). */
  readonly purpose: string | null
  /** A session signed in through this SSO provider of this organization. */
  readonly sso: { readonly orgId: string; readonly providerId: string } | null
}

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

/** A capability without its handler: what a wing's `Api.ts` declares (name, schemas, scope,
 * surfaces, roles), readable without loading the code that serves it. */
export type Contract<I, O> = Omit<Capability<I, O, never>, "handler">

export const defineContract = <I, O>(contract: Contract<I, O>): Contract<I, O> => contract

/** The capability a contract and its handler make; the handler's input and output are the contract's. */
export const implement = <I, O, R>(contract: Contract<I, O>, handler: Capability<I, O, R>["handler"]): Capability<I, O, R> => ({
  ...contract,
  handler
})

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
  /** Capability name -> its input and output as tool schemas, derived once, as the registry is made
   * (MCP tools, the agent's tools and OpenAPI read them; undefined: not an object schema). */
  readonly toolSchemas: ReadonlyMap<string, { readonly input: JsonObject | undefined; readonly output: JsonObject | undefined }>
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
  const toolSchemas = new Map(capabilities.map((c) => [c.name, { input: objectSchemaOf(c.input), output: objectSchemaOf(c.output) }] as const))
  return { all: capabilities, byName, principalRoutes, placeRoutes, toolSchemas }
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
  /** The method and path a REST caller asked for: the 404 of a path no capability answers names it. */
  readonly route?: string
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
