/**
 * Workspace documents (spec 2.9: builtin `document.create`, `document.list`, `document.read`):
 * Markdown with a title, every change a version. Writes are commands to the document actor, reads
 * its projections (`documents`, `document_versions`).
 */
import { Effect, Schema } from "effect"
import { DocumentActor } from "../../actors/document/actor.ts"
import { DocumentNotFound } from "../../actors/document/errors.ts"
import { CreateDocument, ReviseDocument } from "../../actors/document/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { Db, query } from "../../streams/Db.ts"
import { type AnyCapability, defineCapability, type Invocation, type Role } from "../checkpoint/Capability.ts"
import { DEFAULT_PAGE_LIMIT, PageLimit } from "../platform/Paging.ts"

const readers: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member", "workspace:viewer"]
const writers: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member"]

const common = { scope: "workspace", surfaces: ["api", "mcp", "agent"], sensitivity: "low", needsApproval: false, claimedBy: "builtin" } as const
const reads = { ...common, roles: readers, mutating: false, destructive: false } as const
const writes = { ...common, roles: writers, mutating: true, changesAccess: false, destructive: false } as const

/** 1 MiB of Markdown: the JSON routes' body limit, and an event a Kafka record carries. */
export const Title = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(300))
export const Markdown = Schema.String.pipe(Schema.maxLength(512 * 1024))

export const DocumentSummary = Schema.Struct({
  documentId: Schema.String,
  title: Schema.String,
  version: Schema.Int,
  createdBy: Schema.String,
  createdAt: Schema.String,
  updatedAt: Schema.String
})

export const DocumentVersion = Schema.Struct({
  ...DocumentSummary.fields,
  content: Schema.String
})
export type DocumentVersion = typeof DocumentVersion.Type

/** A new document of the caller's in the invocation's workspace; answers it at version 1. */
export const createDocument = (invocation: Invocation, title: string, content: string) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const documentId = invocation.newId("doc")
    const userId = invocation.principal.attributedTo
    const command = new CreateDocument({ documentId, orgId: invocation.orgId!, workspaceId: invocation.workspaceId!, userId, title, content })
    yield* host.send(DocumentActor, documentId, command, invocation.meta)
    return { documentId, title, version: 1, createdBy: userId, createdAt: invocation.at, updatedAt: invocation.at, content }
  })

/** A document of the workspace at a version (its latest when none is named); 404 otherwise. */
export const readDocument = (workspaceId: string, documentId: string, version?: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("read document", () => db.sql`
      select d.document_id, v.title, v.version, d.created_by, d.created_at, v.created_at as updated_at, v.content
      from ${db.table("documents")} d join ${db.table("document_versions")} v on v.document_id = d.document_id
      where d.workspace_id = ${workspaceId} and d.document_id = ${documentId} and v.version = ${version ?? db.sql`d.version`}`)
    if (rows.length === 0) return yield* new DocumentNotFound({ documentId })
    const r = rows[0]
    return {
      documentId: r.document_id as string,
      title: r.title as string,
      version: r.version as number,
      createdBy: r.created_by as string,
      createdAt: (r.created_at as Date).toISOString(),
      updatedAt: (r.updated_at as Date).toISOString(),
      content: r.content as string
    } satisfies DocumentVersion
  })

/** A new version of a workspace document by the caller, answered as the actor has it after (the
 * read model may not show it yet); the same text again changes nothing. */
export const reviseDocument = (invocation: Invocation, documentId: string, title: string, content: string) =>
  Effect.gen(function* () {
    // the workspace's own documents only: the actor knows ids, not who may see them
    yield* readDocument(invocation.workspaceId!, documentId)
    const host = yield* ActorHost
    const { state } = yield* host.send(DocumentActor, documentId, new ReviseDocument({ documentId, userId: invocation.principal.attributedTo, title, content }), invocation.meta)
    if (state._tag === "Absent") return yield* new DocumentNotFound({ documentId })
    const { createdBy, createdAt, updatedAt, version } = state
    return { documentId, title: state.title, version, createdBy, createdAt, updatedAt, content: state.content } satisfies DocumentVersion
  })

export const documentCreate = defineCapability({
  ...writes,
  name: "document.create",
  description: "Create a workspace document: a title and Markdown content, at version 1.",
  input: Schema.Struct({ title: Title, content: Markdown }),
  output: DocumentVersion,
  handler: (invocation, input) => createDocument(invocation, input.title, input.content)
})

export const documentList = defineCapability({
  ...reads,
  name: "document.list",
  description: "The workspace's documents (title, latest version), the most recently changed first.",
  input: Schema.Struct({ limit: Schema.optional(PageLimit) }),
  output: Schema.Struct({ documents: Schema.Array(DocumentSummary) }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const db = yield* Db
      const rows = yield* query("list documents", () => db.sql`
        select document_id, title, version, created_by, created_at, updated_at from ${db.table("documents")}
        where workspace_id = ${invocation.workspaceId!}
        order by updated_at desc, document_id limit ${input.limit ?? DEFAULT_PAGE_LIMIT}`)
      return {
        documents: rows.map((r) => ({
          documentId: r.document_id as string,
          title: r.title as string,
          version: r.version as number,
          createdBy: r.created_by as string,
          createdAt: (r.created_at as Date).toISOString(),
          updatedAt: (r.updated_at as Date).toISOString()
        }))
      }
    })
})

export const documentRead = defineCapability({
  ...reads,
  name: "document.read",
  description: "A workspace document's title and Markdown content, at its latest version or the version named.",
  input: Schema.Struct({ documentId: Schema.String.pipe(Schema.maxLength(64)), version: Schema.optional(Schema.Int.pipe(Schema.positive())) }),
  output: DocumentVersion,
  handler: (invocation, input) => readDocument(invocation.workspaceId!, input.documentId, input.version)
})

export const documentCapabilities: ReadonlyArray<AnyCapability> = [documentCreate, documentList, documentRead]
