/**
 * The checkpoint's rule of who may call what, as a table: given a credential, the roles it holds
 * where the capability acts, and the capability, the call is admitted or refused, and a purpose's
 * refusal names its reason (spec 5 rules 8 to 10). Then `invocable`: what a caller may invoke on a
 * surface. The place and the roles themselves are read from the read models; that part is in
 * test/e2e/access.e2e.test.ts.
 */
import { Effect, Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import type { CredentialKind, Principal } from "../../src/checkpoint/Capability.ts"
import { admits, checkPurpose, invocable } from "../../src/checkpoint/Access.ts"
import { type AnyCapability, makeRegistry, type Role, type Surface } from "../../src/checkpoint/Capability.ts"
import { fixtureCapability } from "../support/capabilities.ts"

const purposes: Record<CredentialKind, string | null> = {
  session: null,
  cli_login: "cli_session_v1",
  api_key: null,
  host_key: "svc_host_v1",
  gateway_key: "svc_gateway_v1",
  telemetry_key: "svc_telemetry_v1",
  unknown_purpose: "svc_root_v1",
  playbook: null
}

const principal = (credential: CredentialKind): Principal => ({
  credential,
  apiKeyId: credential === "session" || credential === "playbook" ? null : "aky_1",
  sessionId: credential === "session" ? "ses_1" : null,
  orgId: credential === "session" ? null : "org_1",
  workspaceId: credential === "session" ? null : "wsp_1",
  userId: credential === "session" || credential === "cli_login" || credential === "playbook" ? "usr_alice" : null,
  attributedTo: "usr_alice",
  customRole: null,
  machineId: credential === "host_key" ? "mch_1" : null,
  purpose: purposes[credential],
  sso: null
})

const capability = fixtureCapability

const read = capability("node.get", { roles: ["workspace:viewer", "workspace:member"] })
const write = capability("node.create", { mutating: true })
const secret = capability("secret.get", { sensitivity: "high" })
const apiOnly = capability("billing.get", { surfaces: ["api"] })
const personal = capability("account.password.set", { scope: "principal", requiresPerson: true, roles: ["person"], mutating: true })
const heartbeat = capability("machine.heartbeat", { machines: ["host"], roles: ["org:owner"], mutating: true })
const telemetry = capability("telemetry.report", { machines: ["telemetry"], roles: [], mutating: true })

const member: ReadonlyArray<Role> = ["workspace:member"]
const viewer: ReadonlyArray<Role> = ["workspace:viewer"]
const owner: ReadonlyArray<Role> = ["org:owner", "workspace:admin"]
const none: ReadonlyArray<Role> = []

/** `admitted`, the reason a purpose refuses with, or `role`: the purpose leaves it to roles the caller lacks. */
type Outcome = "admitted" | "role" | "unknown_purpose" | "purpose_not_allowed" | "session_required"

const table: ReadonlyArray<readonly [CredentialKind, ReadonlyArray<Role>, AnyCapability, Outcome]> = [
  // persons act with their roles
  ["session", member, write, "admitted"],
  ["session", viewer, write, "role"],
  ["session", viewer, read, "admitted"],
  ["session", none, read, "role"],
  ["session", none, personal, "admitted"],
  ["cli_login", none, personal, "admitted"],
  ["playbook", none, personal, "admitted"],
  ["playbook", member, write, "admitted"],
  // an ordinary key acts with its role, and never for a person (rule 10)
  ["api_key", member, write, "admitted"],
  ["api_key", viewer, write, "role"],
  ["api_key", owner, personal, "session_required"],
  ["api_key", member, heartbeat, "role"],
  ["api_key", owner, heartbeat, "admitted"],
  // machine purposes hold no role: their purpose grants what lists them, and nothing else (rule 8)
  ["host_key", none, heartbeat, "admitted"],
  ["host_key", owner, read, "purpose_not_allowed"],
  ["host_key", none, telemetry, "purpose_not_allowed"],
  ["telemetry_key", none, telemetry, "admitted"],
  ["telemetry_key", none, heartbeat, "purpose_not_allowed"],
  // a gateway key: only non-mutating MCP capabilities that are not high-sensitivity, and then by its role
  ["gateway_key", member, read, "admitted"],
  ["gateway_key", none, read, "role"],
  ["gateway_key", owner, write, "purpose_not_allowed"],
  ["gateway_key", owner, secret, "purpose_not_allowed"],
  ["gateway_key", owner, apiOnly, "purpose_not_allowed"],
  // a purpose no rule knows may call nothing (rule 9)
  ["unknown_purpose", owner, read, "unknown_purpose"],
  ["unknown_purpose", none, heartbeat, "unknown_purpose"]
]

describe("access: who may call what", () => {
  for (const [credential, roles, target, outcome] of table) {
    it(`${credential} holding [${roles.join(", ")}] calling ${target.name}: ${outcome}`, () => {
      const caller = principal(credential)
      const purpose = Effect.runSync(Effect.either(checkPurpose(caller, target)))
      if (outcome === "admitted" || outcome === "role") {
        expect(Either.isRight(purpose)).toBe(true)
      } else {
        expect(Either.isLeft(purpose) && purpose.left._tag === "Forbidden" && purpose.left.reason).toBe(outcome)
      }
      expect(admits(caller, target, roles)).toBe(outcome === "admitted")
    })
  }

  it("tells a machine purpose's own grant from a grant left to roles", () => {
    expect(Effect.runSync(checkPurpose(principal("host_key"), heartbeat))).toBe(true)
    expect(Effect.runSync(checkPurpose(principal("telemetry_key"), telemetry))).toBe(true)
    expect(Effect.runSync(checkPurpose(principal("api_key"), heartbeat))).toBe(false)
    expect(Effect.runSync(checkPurpose(principal("session"), read))).toBe(false)
  })
})

describe("access: what a caller may invoke on a surface", () => {
  const packed = capability("codegraph.query", { claimedBy: "codegraph", roles: ["workspace:viewer"] })
  const mcpOnly = capability("tools.describe", { surfaces: ["mcp"], roles: ["workspace:viewer"] })
  const registry = makeRegistry([read, write, secret, apiOnly, personal, heartbeat, packed, mcpOnly])
  const names = (credential: CredentialKind, roles: ReadonlyArray<Role>, packs: ReadonlyArray<string>, surface: Surface) =>
    invocable(registry, principal(credential), roles, new Set(packs), surface).map((c) => c.name)

  const table: ReadonlyArray<readonly [string, CredentialKind, ReadonlyArray<Role>, ReadonlyArray<string>, Surface, ReadonlyArray<string>]> = [
    ["a member's session on the API", "session", member, [], "api", ["node.get", "node.create", "secret.get", "billing.get", "account.password.set"]],
    ["a viewer's session on the API, with the pack enabled", "session", viewer, ["codegraph"], "api", ["node.get", "account.password.set", "codegraph.query"]],
    ["a member's key on MCP", "api_key", member, [], "mcp", ["node.get", "node.create", "secret.get"]],
    ["a viewer's gateway key on MCP", "gateway_key", viewer, ["codegraph"], "mcp", ["node.get", "codegraph.query", "tools.describe"]],
    ["a member's run of an automation (what the agent surface offers)", "playbook", member, [], "playbook", ["node.get", "node.create", "secret.get", "account.password.set"]],
    ["a host key on the API", "host_key", none, [], "api", ["machine.heartbeat"]],
    ["an unknown purpose anywhere", "unknown_purpose", owner, ["codegraph"], "api", []]
  ]

  it.each(table)("%s", (_, credential, roles, packs, surface, expected) => {
    expect(names(credential, roles, packs, surface)).toEqual(expected)
  })
})
