/**
 * People for tests: registers a user with a password in the bootstrap organization (through the
 * actors, as the platform itself would), and signs them in over HTTP to get a session cookie.
 */
import { Effect, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { IssueCredential } from "../../actors/apikey/protocol.ts"
import { ClaimActor } from "../../actors/claim/actor.ts"
import { Claim, claimId } from "../../actors/claim/protocol.ts"
import { OrgActor } from "../../actors/org/actor.ts"
import { AddMember, SetWorkspaceRole } from "../../actors/org/protocol.ts"
import { UserActor } from "../../actors/user/actor.ts"
import { RegisterUser, SetPassword } from "../../actors/user/protocol.ts"
import { mintApiKey, newPublicId } from "../../src/identity/ApiKeyToken.ts"
import { hashPassword } from "../../src/platform/Secrets.ts"
import type { TestNode } from "./platform.ts"

export interface Person {
  readonly userId: string
  readonly email: string
  readonly password: string
}

const meta = () => ({ commandId: randomUUID(), at: new Date().toISOString(), actor: "system" })

/** The bootstrap organization's id and its `main` workspace's id. */
export const bootstrapPlace = async (node: TestNode) => {
  const [row] = await node.db.sql`
    select o.org_id, w.workspace_id from ${node.db.sql(node.db.schema)}.organizations o
    join ${node.db.sql(node.db.schema)}.workspaces w using (org_id)
    where o.slug = ${node.bootstrap.orgSlug} and w.slug = ${node.bootstrap.workspaceSlug}`
  return { orgId: row.org_id as string, workspaceId: row.workspace_id as string }
}

/** A person with a password, optionally a member of the bootstrap organization with these roles. */
export const addPerson = async (
  node: TestNode,
  name: string,
  /** `workspace` is the role in `workspaceId`, the bootstrap workspace unless given. */
  roles: { readonly org?: "owner" | "member"; readonly workspace?: "admin" | "member" | "viewer"; readonly workspaceId?: string } = {}
): Promise<Person> => {
  const userId = `usr_${name}_${randomUUID().slice(0, 8)}`
  const email = `${name}-${randomUUID().slice(0, 8)}@example.test`
  const password = `pw-${randomUUID()}`
  const bootstrap = await bootstrapPlace(node)
  const { orgId } = bootstrap
  const workspaceId = roles.workspaceId ?? bootstrap.workspaceId
  const passwordHash = await hashPassword(password)
  await Runtime.runPromise(node.runtime)(
    Effect.gen(function* () {
      yield* node.host.send(ClaimActor, claimId("email", email), new Claim({ namespace: "email", value: email, ownerId: userId }), meta())
      yield* node.host.send(UserActor, userId, new RegisterUser({ userId, email, name }), meta())
      yield* node.host.send(UserActor, userId, new SetPassword({ userId, passwordHash }), meta())
      if (roles.org !== undefined) yield* node.host.send(OrgActor, orgId, new AddMember({ orgId, userId, role: roles.org }), meta())
      if (roles.workspace !== undefined) {
        yield* node.host.send(OrgActor, orgId, new SetWorkspaceRole({ orgId, workspaceId, userId, role: roles.workspace }), meta())
      }
    })
  )
  return { userId, email, password }
}

/** Signs in over HTTP; resolves with the `Cookie` header value to send, and the reply. */
export const signIn = async (baseUrl: string, person: Pick<Person, "email" | "password">, code?: string) => {
  const response = await fetch(`${baseUrl}/v1/auth/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: person.email, password: person.password, ...(code === undefined ? {} : { code }) })
  })
  const body: any = await response.json()
  const setCookie = response.headers.get("set-cookie") ?? ""
  return { status: response.status, body, setCookie, cookie: setCookie.split(";")[0] }
}

/** A JSON call with a session cookie instead of a bearer key. */
export const callWithCookie = async (baseUrl: string, cookie: string, path: string, input: unknown, method = "POST") => {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { "content-type": "application/json", cookie },
    body: JSON.stringify(input)
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

/** A CLI login (`cli_session_v1`) of the person for the bootstrap workspace, as the device login
 * issues one; resolves with its raw key. */
export const cliLogin = async (node: TestNode, person: Pick<Person, "userId">): Promise<string> => {
  const { orgId, workspaceId } = await bootstrapPlace(node)
  const token = mintApiKey()
  const keyId = newPublicId("aky")
  await Runtime.runPromise(node.runtime)(
    node.host.send(ApiKeyActor, keyId, new IssueCredential({
      keyId,
      orgId,
      workspaceId,
      createdBy: person.userId,
      name: "CLI login (tests)",
      lookupId: token.lookupId,
      secretHash: token.secretHash,
      scopes: { purpose: "cli_session_v1" },
      expiresAt: null,
      customRole: null,
      machineId: null,
      supersedes: null
    }), meta())
  )
  return token.raw
}

/** A person of the bootstrap workspace (a member of it and of its organization), signed in. */
export interface SignedInPerson extends Person {
  readonly cookie: string
}

/**
 * The bootstrap place as the audit suites use it: `names` added as members and signed in, the
 * bootstrap Owner's session, and `as`, which calls a capability in the workspace with a session.
 */
export const signedInPlace = async <N extends string>(node: TestNode, names: ReadonlyArray<N>) => {
  const people = {} as Record<N, SignedInPerson>
  for (const name of names) {
    const person = await addPerson(node, name, { org: "member", workspace: "member" })
    people[name] = { ...person, cookie: (await signIn(node.baseUrl, person)).cookie }
  }
  const ownerCookie = (await signIn(node.baseUrl, { email: node.bootstrap.ownerEmail!, password: node.bootstrap.ownerPassword! })).cookie
  const as = (cookie: string, capability: string, input: unknown = {}) =>
    callWithCookie(node.baseUrl, cookie, `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/${capability.replaceAll(".", "/")}`, input)
  return { people, ownerCookie, as }
}
