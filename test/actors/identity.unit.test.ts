import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { ApiKeyAlreadyExists, ApiKeyNotFound, ReservedScopeKey } from "../../actors/apikey/errors.ts"
import { ApiKeyCreated, ApiKeyRevoked } from "../../actors/apikey/events.ts"
import { CreateApiKey, RevokeApiKey } from "../../actors/apikey/protocol.ts"
import { keyOf } from "../../actors/kernel.ts"
import { OrgActor } from "../../actors/org/actor.ts"
import {
  AlreadyMember,
  NotOrgMember,
  OrganizationAlreadyExists,
  OrganizationNotFound,
  WorkspaceAlreadyExists,
  WorkspaceNotFound,
  WorkspaceSlugTaken
} from "../../actors/org/errors.ts"
import { MemberAdded, OrganizationCreated, WorkspaceCreated, WorkspaceRoleSet } from "../../actors/org/events.ts"
import { AddMember, CreateOrganization, CreateWorkspace, SetWorkspaceRole } from "../../actors/org/protocol.ts"
import { UserActor } from "../../actors/user/actor.ts"
import { UserAlreadyRegistered } from "../../actors/user/errors.ts"
import { UserRegistered } from "../../actors/user/events.ts"
import { RegisterUser } from "../../actors/user/protocol.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const at = meta().at
const later = "2024-05-02T08:30:00.000Z"

describe("org actor", () => {
  const org = spec(OrgActor)
  const created = new OrganizationCreated({ orgId: "org_1", slug: "acme", name: "Acme", createdAt: at })
  const eng = new WorkspaceCreated({ orgId: "org_1", workspaceId: "wsp_1", slug: "eng", name: "Engineering", createdAt: at })
  const alice = new MemberAdded({ orgId: "org_1", userId: "usr_alice", role: "owner" })
  const bob = new MemberAdded({ orgId: "org_1", userId: "usr_bob", role: "member" })
  const bobViewer = new WorkspaceRoleSet({ orgId: "org_1", workspaceId: "wsp_1", userId: "usr_bob", role: "viewer" })

  it("creates an organization at the command's time", () =>
    org.given([]).when(new CreateOrganization({ orgId: "org_1", slug: "acme", name: "Acme" })).then([created]))

  it("refuses to create an organization twice", () =>
    org
      .given([created])
      .when(new CreateOrganization({ orgId: "org_1", slug: "other", name: "Other" }))
      .thenThrows(new OrganizationAlreadyExists({ orgId: "org_1" })))

  it.each([
    ["CreateWorkspace", new CreateWorkspace({ orgId: "org_1", workspaceId: "wsp_1", slug: "eng", name: "Eng" })],
    ["AddMember", new AddMember({ orgId: "org_1", userId: "usr_alice", role: "owner" })],
    ["SetWorkspaceRole", new SetWorkspaceRole({ orgId: "org_1", workspaceId: "wsp_1", userId: "usr_bob", role: "admin" })]
  ])("refuses %s on an organization that does not exist", (_, command) =>
    org.given([]).when(command).thenThrows(new OrganizationNotFound({ orgId: "org_1" })))

  describe("CreateWorkspace", () => {
    it("creates a workspace", () =>
      org
        .given([created])
        .when(new CreateWorkspace({ orgId: "org_1", workspaceId: "wsp_1", slug: "eng", name: "Engineering" }))
        .then([eng]))

    it("refuses a slug another workspace of the organization holds", () =>
      org
        .given([created, eng])
        .when(new CreateWorkspace({ orgId: "org_1", workspaceId: "wsp_2", slug: "eng", name: "Eng 2" }))
        .thenThrows(new WorkspaceSlugTaken({ orgId: "org_1", slug: "eng" })))

    it("refuses a workspace id that exists", () =>
      org
        .given([created, eng])
        .when(new CreateWorkspace({ orgId: "org_1", workspaceId: "wsp_1", slug: "ops", name: "Ops" }))
        .thenThrows(new WorkspaceAlreadyExists({ orgId: "org_1", workspaceId: "wsp_1" })))
  })

  describe("AddMember", () => {
    it("adds a member", () =>
      org.given([created]).when(new AddMember({ orgId: "org_1", userId: "usr_alice", role: "owner" })).then([alice]))

    it("does nothing when the user already holds that role", () =>
      org
        .given([created, alice])
        .when(new AddMember({ orgId: "org_1", userId: "usr_alice", role: "owner" }))
        .thenNothingHappened())

    it("refuses another role for an existing member", () =>
      org
        .given([created, alice])
        .when(new AddMember({ orgId: "org_1", userId: "usr_alice", role: "member" }))
        .thenThrows(new AlreadyMember({ orgId: "org_1", userId: "usr_alice", role: "owner" })))
  })

  describe("SetWorkspaceRole", () => {
    it("sets a member's role in a workspace", () =>
      org
        .given([created, eng, bob])
        .when(new SetWorkspaceRole({ orgId: "org_1", workspaceId: "wsp_1", userId: "usr_bob", role: "viewer" }))
        .then([bobViewer]))

    it("changes a role", () =>
      org
        .given([created, eng, bob, bobViewer])
        .when(new SetWorkspaceRole({ orgId: "org_1", workspaceId: "wsp_1", userId: "usr_bob", role: "admin" }))
        .then([new WorkspaceRoleSet({ orgId: "org_1", workspaceId: "wsp_1", userId: "usr_bob", role: "admin" })]))

    it("does nothing when the role is already set", () =>
      org
        .given([created, eng, bob, bobViewer])
        .when(new SetWorkspaceRole({ orgId: "org_1", workspaceId: "wsp_1", userId: "usr_bob", role: "viewer" }))
        .thenNothingHappened())

    it("refuses a workspace that does not exist", () =>
      org
        .given([created, bob])
        .when(new SetWorkspaceRole({ orgId: "org_1", workspaceId: "wsp_9", userId: "usr_bob", role: "member" }))
        .thenThrows(new WorkspaceNotFound({ orgId: "org_1", workspaceId: "wsp_9" })))

    // `constructor` would be found by `in` on a plain object
    it.each(["usr_carol", "constructor"])("refuses %s, who is not an organization member", (userId) =>
      org
        .given([created, eng, bob])
        .when(new SetWorkspaceRole({ orgId: "org_1", workspaceId: "wsp_1", userId, role: "member" }))
        .thenThrows(new NotOrgMember({ orgId: "org_1", userId })))
  })

  describe("slugs", () => {
    it.each(["a", "0", "acme-corp", "a".repeat(63), "9-lives"])("accepts %s", (slug) =>
      expect(new CreateOrganization({ orgId: "org_1", slug, name: "Acme" }).slug).toBe(slug))

    it.each(["", "-acme", "Acme", "acme_corp", "acme corp", "a".repeat(64), "é"])("refuses '%s'", (slug) => {
      expect(() => new CreateOrganization({ orgId: "org_1", slug, name: "Acme" })).toThrow()
      expect(() => new CreateWorkspace({ orgId: "org_1", workspaceId: "wsp_1", slug, name: "Eng" })).toThrow()
    })
  })

  it("projects organizations, workspaces and memberships", () => {
    const history = [created, eng, alice, bob, bobViewer].map((e) => [e, at] as const)
    const rows = projectedRows(OrgActor, keyOf(OrgActor, "org_1"), history)
    expect(rows).toEqual({
      organizations: [{ org_id: "org_1", slug: "acme", name: "Acme", created_at: at }],
      workspaces: [{ workspace_id: "wsp_1", org_id: "org_1", slug: "eng", name: "Engineering", created_at: at }],
      org_members: [
        { org_id: "org_1", user_id: "usr_alice", role: "owner" },
        { org_id: "org_1", user_id: "usr_bob", role: "member" }
      ],
      workspace_members: [{ workspace_id: "wsp_1", user_id: "usr_bob", role: "viewer" }],
      org_settings: [{ org_id: "org_1", plan: "standard", require_sso: false, require_mfa: false, mfa_grace_ends_at: null }]
    })
    expect(projectedRows(OrgActor, keyOf(OrgActor, "org_1"), history)).toEqual(rows)
  })

  it.effect("round-trips events, commands, state and errors through JSON", () =>
    Effect.gen(function* () {
      for (const event of [created, eng, alice, bob, bobViewer]) {
        expect(yield* jsonRoundTrip(OrgActor.events, event)).toEqual(event)
      }
      const command = new SetWorkspaceRole({ orgId: "org_1", workspaceId: "wsp_1", userId: "usr_bob", role: "admin" })
      expect(yield* jsonRoundTrip(OrgActor.commands, command)).toEqual(command)
      const state = [created, eng, alice, bob, bobViewer].reduce(OrgActor.evolve, OrgActor.initialState)
      expect(yield* jsonRoundTrip(OrgActor.state, state)).toEqual(state)
      const error = new WorkspaceSlugTaken({ orgId: "org_1", slug: "eng" })
      expect(yield* jsonRoundTrip(OrgActor.errors, error)).toEqual(error)
    }))
})

describe("user actor", () => {
  const user = spec(UserActor)
  const registered = new UserRegistered({ userId: "usr_1", email: "ada@example.com", name: "Ada", createdAt: at })

  it("registers a user at the command's time", () =>
    user.given([]).when(new RegisterUser({ userId: "usr_1", email: "ada@example.com", name: "Ada" })).then([registered]))

  it("refuses to register a user twice", () =>
    user
      .given([registered])
      .when(new RegisterUser({ userId: "usr_1", email: "ada@example.org", name: "Ada" }))
      .thenThrows(new UserAlreadyRegistered({ userId: "usr_1" })))

  // the unique email index would otherwise hold Ada@x and ada@x as two users
  it.each(["Ada@example.com", "ada", "ada @example.com", "@example.com"])("refuses the email '%s'", (email) =>
    expect(() => new RegisterUser({ userId: "usr_1", email, name: "Ada" })).toThrow())

  it("projects the user", () => {
    const rows = projectedRows(UserActor, keyOf(UserActor, "usr_1"), [[registered, at]])
    expect(rows).toEqual({ users: [{ user_id: "usr_1", email: "ada@example.com", name: "Ada", created_at: at }] })
  })

  it.effect("round-trips events, commands, state and errors through JSON", () =>
    Effect.gen(function* () {
      expect(yield* jsonRoundTrip(UserActor.events, registered)).toEqual(registered)
      const command = new RegisterUser({ userId: "usr_1", email: "ada@example.com", name: "Ada" })
      expect(yield* jsonRoundTrip(UserActor.commands, command)).toEqual(command)
      const state = UserActor.evolve(UserActor.initialState, registered)
      expect(yield* jsonRoundTrip(UserActor.state, state)).toEqual(state)
      const error = new UserAlreadyRegistered({ userId: "usr_1" })
      expect(yield* jsonRoundTrip(UserActor.errors, error)).toEqual(error)
    }))
})

describe("apikey actor", () => {
  const apikey = spec(ApiKeyActor)
  const request = {
    keyId: "aky_1",
    orgId: "org_1",
    workspaceId: "wsp_1",
    createdBy: "usr_alice",
    name: "CI",
    lookupId: "AAAAAAAAAAAAAAAA",
    secretHash: "hash",
    scopes: { env: "ci" },
    expiresAt: "2025-05-01T12:00:00.000Z"
  }
  const created = new ApiKeyCreated({ ...request, createdAt: at })
  const revoked = new ApiKeyRevoked({ keyId: "aky_1", revokedAt: later })

  it.each([
    ["a workspace key", request],
    ["an organization key that never expires", { ...request, workspaceId: null, expiresAt: null, scopes: {} }]
  ])("creates %s at the command's time", (_, fields) =>
    apikey
      .given([])
      .when(new CreateApiKey(fields))
      .then([new ApiKeyCreated({ ...fields, createdAt: at })]))

  it("refuses a key id that exists", () =>
    apikey.given([created]).when(new CreateApiKey(request)).thenThrows(new ApiKeyAlreadyExists({ keyId: "aky_1" })))

  it.each<Record<string, string>>([{ purpose: "svc_host_v1" }, { env: "ci", purpose: "" }])("refuses the reserved scope key in %o", (scopes) =>
    apikey
      .given([])
      .when(new CreateApiKey({ ...request, scopes }))
      .thenThrows(new ReservedScopeKey({ scopeKey: "purpose" })))

  it("revokes an active key at the command's time", () =>
    apikey
      .given([created])
      .when(new RevokeApiKey({ keyId: "aky_1" }), meta({ at: later }))
      .then([revoked]))

  it("records nothing when the key is already revoked", () =>
    apikey.given([created, revoked]).when(new RevokeApiKey({ keyId: "aky_1" })).thenNothingHappened())

  it("refuses to revoke a key that does not exist", () =>
    apikey.given([]).when(new RevokeApiKey({ keyId: "aky_1" })).thenThrows(new ApiKeyNotFound({ keyId: "aky_1" })))

  it("projects the full row after each event", () => {
    const key = keyOf(ApiKeyActor, "aky_1")
    const row = {
      key_id: "aky_1",
      org_id: "org_1",
      workspace_id: "wsp_1",
      created_by: "usr_alice",
      name: "CI",
      lookup_id: "AAAAAAAAAAAAAAAA",
      secret_hash: "hash",
      scopes: { env: "ci" },
      purpose: null,
      custom_role: null,
      machine_id: null,
      supersedes: null,
      superseded_by: null,
      status: "active",
      expires_at: "2025-05-01T12:00:00.000Z",
      created_at: at,
      revoked_at: null
    }
    expect(projectedRows(ApiKeyActor, key, [[created, at]]).api_keys).toEqual([row])
    const history = [[created, at], [revoked, later]] as const
    const rows = projectedRows(ApiKeyActor, key, history)
    expect(rows.api_keys).toEqual([{ ...row, status: "revoked", revoked_at: later }])
    // each event is also a security record in the organization's audit log
    expect(rows.audit_log.map((r: any) => [r.event, r.kind, r.org_id])).toEqual([
      ["api_key.created", "security", "org_1"],
      ["api_key.revoked", "security", "org_1"]
    ])
    expect(projectedRows(ApiKeyActor, key, history)).toEqual(rows)
  })

  it.effect("round-trips events, commands, state and errors through JSON", () =>
    Effect.gen(function* () {
      for (const event of [created, revoked]) expect(yield* jsonRoundTrip(ApiKeyActor.events, event)).toEqual(event)
      for (const command of [new CreateApiKey(request), new RevokeApiKey({ keyId: "aky_1" })]) {
        expect(yield* jsonRoundTrip(ApiKeyActor.commands, command)).toEqual(command)
      }
      const state = [created, revoked].reduce(ApiKeyActor.evolve, ApiKeyActor.initialState)
      expect(yield* jsonRoundTrip(ApiKeyActor.state, state)).toEqual(state)
      const error = new ReservedScopeKey({ scopeKey: "purpose" })
      expect(yield* jsonRoundTrip(ApiKeyActor.errors, error)).toEqual(error)
    }))
})
