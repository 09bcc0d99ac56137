/**
 * The first start on an empty data directory: organization `acme`, workspace `main`, an Owner,
 * a workspace key and an organization key, written to `<data dir>/bootstrap.json`. Later starts
 * read that file and create nothing.
 */
import { Clock, Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import * as path from "node:path"
import { CreateApiKey } from "../actors/apikey/protocol.ts"
import { ApiKeyActor } from "../actors/apikey/actor.ts"
import { OrgActor } from "../actors/org/actor.ts"
import { AddMember, CreateOrganization, CreateWorkspace, SetWorkspaceRole } from "../actors/org/protocol.ts"
import { UserActor } from "../actors/user/actor.ts"
import { RegisterUser } from "../actors/user/protocol.ts"
import { ActorHost } from "../streams/ActorHost.ts"
import { mintApiKey, newPublicId } from "./ApiKeyToken.ts"
import { findPlace } from "./Auth.ts"
import { Db, query } from "./Db.ts"

export const BootstrapFile = Schema.Struct({
  baseUrl: Schema.String,
  orgSlug: Schema.String,
  workspaceSlug: Schema.String,
  ownerEmail: Schema.String,
  workspaceKey: Schema.String,
  orgKey: Schema.String
})
export type BootstrapFile = typeof BootstrapFile.Type

const ORG_SLUG = "acme"
const WORKSPACE_SLUG = "main"
const OWNER_EMAIL = "owner@acme.example"

export const bootstrapPath = (dataDir: string) => path.join(dataDir, "bootstrap.json")

/** Reads bootstrap.json, or creates the first organization and writes it. */
export const bootstrap = (dataDir: string, baseUrl: string) =>
  Effect.gen(function* () {
    const file = bootstrapPath(dataDir)
    const existing = yield* Effect.tryPromise(() => readFile(file, "utf8")).pipe(Effect.option)
    if (existing._tag === "Some") {
      const data = yield* Schema.decodeUnknown(Schema.parseJson(BootstrapFile))(existing.value)
      return { created: false, data: { ...data, baseUrl } }
    }
    const host = yield* ActorHost
    const db = yield* Db
    const at = new Date(yield* Clock.currentTimeMillis).toISOString()
    const meta = { at, actor: "system" }
    const send = <S, C extends { readonly _tag: string }, E extends { readonly _tag: string }, Err>(
      kind: Parameters<typeof host.send<S, C, E, Err>>[0],
      id: string,
      command: C
    ) => host.send(kind, id, command, { ...meta, commandId: randomUUID() })

    // a start that died half-way left the organization: reuse it, mint new keys
    const place = yield* findPlace(ORG_SLUG, WORKSPACE_SLUG)
    let orgId: string, workspaceId: string, ownerId: string
    if (place !== undefined) {
      orgId = place.orgId
      workspaceId = place.workspaceId
      const [owner] = yield* query("find owner", () => db.sql`
        select user_id from ${db.table("org_members")} where org_id = ${orgId} and role = 'owner' order by user_id limit 1`)
      ownerId = owner.user_id
    } else {
      orgId = newPublicId("org")
      workspaceId = newPublicId("wsp")
      ownerId = newPublicId("usr")
      yield* send(UserActor, ownerId, new RegisterUser({ userId: ownerId, email: OWNER_EMAIL, name: "Owner" }))
      yield* send(OrgActor, orgId, new CreateOrganization({ orgId, slug: ORG_SLUG, name: "Acme" }))
      yield* send(OrgActor, orgId, new AddMember({ orgId, userId: ownerId, role: "owner" }))
      yield* send(OrgActor, orgId, new CreateWorkspace({ orgId, workspaceId, slug: WORKSPACE_SLUG, name: "Main" }))
      yield* send(OrgActor, orgId, new SetWorkspaceRole({ orgId, workspaceId, userId: ownerId, role: "admin" }))
    }
    const mint = (name: string, keyWorkspace: string | null) =>
      Effect.gen(function* () {
        const token = mintApiKey()
        const keyId = newPublicId("aky")
        yield* send(ApiKeyActor, keyId, new CreateApiKey({
          keyId,
          orgId,
          workspaceId: keyWorkspace,
          createdBy: ownerId,
          name,
          lookupId: token.lookupId,
          secretHash: token.secretHash,
          scopes: {},
          expiresAt: null
        }))
        return token.raw
      })
    const data: BootstrapFile = {
      baseUrl,
      orgSlug: ORG_SLUG,
      workspaceSlug: WORKSPACE_SLUG,
      ownerEmail: OWNER_EMAIL,
      workspaceKey: yield* mint("bootstrap workspace key", workspaceId),
      orgKey: yield* mint("bootstrap organization key", null)
    }
    yield* Effect.tryPromise(async () => {
      await mkdir(dataDir, { recursive: true })
      await writeFile(file, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 })
    })
    return { created: true, data }
  })
