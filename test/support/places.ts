/**
 * Places for tests beyond the bootstrap one: another workspace of the bootstrap organization, and
 * workspace keys, made through the actors as the platform itself would.
 */
import { Effect, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { CreateApiKey } from "../../actors/apikey/protocol.ts"
import { OrgActor } from "../../actors/org/actor.ts"
import { CreateWorkspace, SetWorkspaceRole } from "../../actors/org/protocol.ts"
import { mintApiKey, newPublicId } from "../../src/identity/ApiKeyToken.ts"
import { addPerson, bootstrapPlace, type Person } from "./people.ts"
import type { TestNode } from "./platform.ts"

export interface Place {
  readonly orgId: string
  readonly workspaceId: string
}

const meta = () => ({ commandId: randomUUID(), at: new Date().toISOString(), actor: "system" })

const run = <A, E>(node: TestNode, effect: Effect.Effect<A, E, any>): Promise<A> =>
  Runtime.runPromise(node.runtime)(effect as Effect.Effect<A, E, never>)

/** Another workspace of the bootstrap organization: `other` (`wsp_other`, named "Other") unless told. */
export const addWorkspace = async (
  node: TestNode,
  { slug = "other", workspaceId = `wsp_${slug}`, name = "Other" }: { readonly slug?: string; readonly workspaceId?: string; readonly name?: string } = {}
): Promise<Place & { readonly slug: string }> => {
  const { orgId } = await bootstrapPlace(node)
  await run(node, node.host.send(OrgActor, orgId, new CreateWorkspace({ orgId, workspaceId, slug, name }), meta()))
  return { orgId, workspaceId, slug }
}

type KeyFields = ConstructorParameters<typeof CreateApiKey>[0]

/**
 * A key of the place, created by `createdBy` through the actor: no scopes, no expiry, no custom
 * role, unless `overrides` say otherwise.
 */
export const addKey = async (
  node: TestNode,
  place: Place,
  createdBy: string,
  name: string,
  overrides: Partial<KeyFields> = {}
): Promise<{ readonly keyId: string; readonly raw: string }> => {
  const token = mintApiKey()
  const keyId = newPublicId("aky")
  await run(node, node.host.send(ApiKeyActor, keyId, new CreateApiKey({
    keyId,
    orgId: place.orgId,
    workspaceId: place.workspaceId,
    createdBy,
    name,
    lookupId: token.lookupId,
    secretHash: token.secretHash,
    scopes: {},
    expiresAt: null,
    customRole: null,
    machineId: null,
    supersedes: null,
    ...overrides
  }), meta()))
  return { keyId, raw: token.raw }
}

/**
 * Another workspace of the bootstrap organization (see `addWorkspace`), a person who is a member
 * of the organization (and, when `workspaceRole` is given, of that workspace with that role), and a
 * key of that workspace the person created.
 */
export const otherWorkspaceWithKey = async (
  node: TestNode,
  options: {
    readonly workspace?: Parameters<typeof addWorkspace>[1]
    readonly person: string
    readonly workspaceRole?: "admin" | "member" | "viewer"
    readonly keyName: string
  }
): Promise<{ readonly place: Place & { readonly slug: string }; readonly person: Person; readonly key: string }> => {
  const place = await addWorkspace(node, options.workspace)
  const person = await addPerson(node, options.person, { org: "member" })
  if (options.workspaceRole !== undefined) {
    const role = options.workspaceRole
    await run(node, node.host.send(OrgActor, place.orgId, new SetWorkspaceRole({ orgId: place.orgId, workspaceId: place.workspaceId, userId: person.userId, role }), meta()))
  }
  const { raw } = await addKey(node, place, person.userId, options.keyName)
  return { place, person, key: raw }
}
