/**
 * Capabilities about the caller's own identity: who the credential is, and what it may do in a
 * workspace.
 */
import { Effect } from "effect"
import { invocable } from "../checkpoint/Access.ts"
import { type AnyCapability, Capabilities, implement, type Role } from "../checkpoint/Capability.ts"
import { Unauthorized } from "../platform/Errors.ts"
import { packsOf } from "../packs/Entitlement.ts"
import * as Api from "./Api.ts"

// the route passes only the Authorization header, so every caller here holds a bearer credential
export const whoami = implement(Api.whoami, ({ principal }) =>
  principal.apiKeyId === null || principal.orgId === null
    ? new Unauthorized({ reason: "missing_credential", message: "whoami takes an Authorization: Bearer credential" })
    : Effect.succeed({
        authenticated: true as const,
        apiKeyId: principal.apiKeyId,
        orgId: principal.orgId,
        workspaceId: principal.workspaceId,
        userId: principal.userId
      })
)

/** The part of a role after its scope (`workspace:admin` -> `admin`), of the first role of that scope held. */
const roleIn = <S extends string>(roles: ReadonlyArray<Role>, scope: "org" | "workspace") => {
  const role = roles.find((r) => r.startsWith(`${scope}:`))
  return role === undefined ? null : (role.slice(scope.length + 1) as S)
}

export const getAccess = implement(Api.getAccess, (invocation) =>
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
)

export const identityCapabilities: ReadonlyArray<AnyCapability> = [whoami, getAccess]
