/**
 * The first start on an empty data directory: organization `acme`, workspace `main`, an Owner,
 * a workspace key and an organization key, written to `<data dir>/bootstrap.json`. Later starts
 * read that file and create nothing. Several nodes may bootstrap one database at once: they share
 * the organization, and each mints keys of its own.
 */
import { Clock, Effect, Schema } from "effect"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import * as path from "node:path"
import { CreateApiKey } from "../../actors/apikey/protocol.ts"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { OrgActor } from "../../actors/org/actor.ts"
import { AddMember, CreateOrganization, CreateWorkspace, SetWorkspaceRole } from "../../actors/org/protocol.ts"
import { UserActor } from "../../actors/user/actor.ts"
import { RegisterUser, SetPassword } from "../../actors/user/protocol.ts"
import { ClaimActor } from "../../actors/claim/actor.ts"
import { Claim, claimId } from "../../actors/claim/protocol.ts"
import { hashPassword } from "../platform/Secrets.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { mintApiKey, newPublicId } from "./ApiKeyToken.ts"
import { isRetryable } from "../platform/Failures.ts"

export const BootstrapFile = Schema.Struct({
  baseUrl: Schema.String,
  orgSlug: Schema.String,
  workspaceSlug: Schema.String,
  ownerEmail: Schema.String,
  /** The Owner's first password, for `POST /v1/auth/sign-in`; absent in files written before sign-in existed. */
  ownerPassword: Schema.optional(Schema.String),
  workspaceKey: Schema.String,
  orgKey: Schema.String
})
export type BootstrapFile = typeof BootstrapFile.Type

const ORG_SLUG = "acme"
const WORKSPACE_SLUG = "main"
const OWNER_EMAIL = "owner@acme.example"

/** Things an earlier (or concurrent) bootstrap already made. */
const alreadyDone: ReadonlySet<string> = new Set(["UserAlreadyRegistered", "OrganizationAlreadyExists", "AlreadyMember", "WorkspaceAlreadyExists", "NameTaken"])

/** The same id on every node: bootstrap's objects are one per database, whoever creates them. */
const fixedId = (prefix: string, name: string) =>
  `${prefix}_${createHash("sha256").update(`svc-bootstrap\n${name}`).digest("hex").slice(0, 32)}`

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
    const at = new Date(yield* Clock.currentTimeMillis).toISOString()
    // Fixed ids and command ids: nodes bootstrapping one database at the same time send the same
    // commands to the same actors, which decide them once (a retried command id changes nothing).
    // A rejection for something that already exists means an earlier start got there.
    const send = <S, C extends { readonly _tag: string }, E extends { readonly _tag: string }, Err>(
      kind: Parameters<typeof host.send<S, C, E, Err>>[0],
      id: string,
      command: C,
      commandId: string
    ) =>
      host.send(kind, id, command, { at, actor: "system", commandId }).pipe(
        Effect.retry({ while: isRetryable, times: 5 }),
        Effect.catchIf((e) => alreadyDone.has((e as { _tag?: string })._tag ?? ""), () => Effect.void)
      )
    const orgId = fixedId("org", ORG_SLUG)
    const workspaceId = fixedId("wsp", `${ORG_SLUG}/${WORKSPACE_SLUG}`)
    const ownerId = fixedId("usr", OWNER_EMAIL)
    yield* send(ClaimActor, claimId("email", OWNER_EMAIL), new Claim({ namespace: "email", value: OWNER_EMAIL, ownerId }), "bootstrap:owner-email")
    yield* send(UserActor, ownerId, new RegisterUser({ userId: ownerId, email: OWNER_EMAIL, name: "Owner" }), "bootstrap:owner")
    // each node that bootstraps sets a password of its own; the last one set is the one that works
    const ownerPassword = randomBytes(18).toString("base64url")
    const passwordHash = yield* Effect.promise(() => hashPassword(ownerPassword))
    yield* send(UserActor, ownerId, new SetPassword({ userId: ownerId, passwordHash }), `bootstrap:owner-password:${randomUUID()}`)
    yield* send(OrgActor, orgId, new CreateOrganization({ orgId, slug: ORG_SLUG, name: "Acme" }), "bootstrap:organization")
    yield* send(OrgActor, orgId, new AddMember({ orgId, userId: ownerId, role: "owner" }), "bootstrap:owner-member")
    yield* send(OrgActor, orgId, new CreateWorkspace({ orgId, workspaceId, slug: WORKSPACE_SLUG, name: "Main" }), "bootstrap:workspace")
    yield* send(OrgActor, orgId, new SetWorkspaceRole({ orgId, workspaceId, userId: ownerId, role: "admin" }), "bootstrap:owner-admin")
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
        }), `bootstrap:${keyId}`)
        return token.raw
      })
    const data: BootstrapFile = {
      baseUrl,
      orgSlug: ORG_SLUG,
      workspaceSlug: WORKSPACE_SLUG,
      ownerEmail: OWNER_EMAIL,
      ownerPassword,
      workspaceKey: yield* mint("bootstrap workspace key", workspaceId),
      orgKey: yield* mint("bootstrap organization key", null)
    }
    yield* Effect.tryPromise(async () => {
      await mkdir(dataDir, { recursive: true })
      await writeFile(file, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 })
    })
    return { created: true, data }
  })
