/**
 * Capabilities about the caller's own identity: who the credential is, and what it may do in a
 * workspace.
 */
import { Effect, Schema } from "effect"
import { invocable } from "../checkpoint/Access.ts"
import { type AnyCapability, Capabilities, defineCapability, type Role } from "../checkpoint/Capability.ts"
import { Unauthorized } from "../platform/Errors.ts"
import { packsOf } from "../packs/Entitlement.ts"

export const whoami = defineCapability({
  name: "auth.whoami",
  description: "Who the presented credential is: its key id, organization, workspace and person.",
  scope: "principal",
  input: Schema.Struct({}),
  output: Schema.Struct({
    authenticated: Schema.Literal(true),
    apiKeyId: Schema.String,
    orgId: Schema.String,
    workspaceId: Schema.NullOr(Schema.String),
    userId: Schema.NullOr(Schema.String)
  }),
  surfaces: ["api", "mcp"],
  roles: ["org:owner", "org:member", "workspace:admin", "workspace:member", "workspace:viewer", "person"],
  sensitivity: "low",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin",
  // the route passes only the Authorization header, so every caller here holds a bearer credential
  handler: ({ principal }) =>
    principal.apiKeyId === null || principal.orgId === null
      ? new Unauthorized({ reason: "missing_credential", message: "whoami takes an Authorization: Bearer credential" })
      : Effect.succeed({
          authenticated: true as const,
          apiKeyId: principal.apiKeyId,
          orgId: principal.orgId,
          workspaceId: principal.workspaceId,
          userId: principal.userId
        })
})

/** The part of a role after its scope (`workspace:admin` -> `admin`), of the first role of that scope held. */
const roleIn = <S extends string>(roles: ReadonlyArray<Role>, scope: "org" | "workspace") => {
  const role = roles.find((r) => r.startsWith(`${scope}:`))
  return role === undefined ? null : (role.slice(scope.length + 1) as S)
}

export const getAccess = defineCapability({
  name: "access.get",
  description:
    "What you may do in this workspace: the names of the capabilities you may invoke here over the API (by the checkpoint's own rules: your roles, your credential's kind, the packs the organization enabled), and your workspace and organization roles.",
  scope: "workspace",
  input: Schema.Struct({}),
  output: Schema.Struct({
    capabilities: Schema.Array(Schema.String),
    workspaceRole: Schema.NullOr(Schema.Literal("admin", "member", "viewer")),
    orgRole: Schema.NullOr(Schema.Literal("owner", "member"))
  }),
  surfaces: ["api"],
  roles: ["org:owner", "org:member", "workspace:admin", "workspace:member", "workspace:viewer"],
  sensitivity: "low",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin",
  handler: (invocation) =>
    Effect.gen(function* () {
      const registry = yield* Capabilities
      const packs = yield* packsOf(invocation.orgId)
      // the roles resolved for this workspace are the ones any capability acting here (or on its organization) is resolved with
      const capabilities = invocable(registry, invocation.principal, invocation.roles, packs, "api")
        .filter((c) => c.scope !== "principal")
        .map((c) => c.name)
        .sort()
      return {
        capabilities,
        workspaceRole: roleIn<"admin" | "member" | "viewer">(invocation.roles, "workspace"),
        orgRole: roleIn<"owner" | "member">(invocation.roles, "org")
      }
    })
})

export const identityCapabilities: ReadonlyArray<AnyCapability> = [whoami, getAccess]
