/**
 * Workspace documents (spec 2.9: builtin `document.create`, `document.list`, `document.read`):
 * Markdown with a title, every change a version. Writes are commands to the document actor, reads
 * its projections (`documents`, `document_versions`).
 */
import { Effect } from "effect"
import { DocumentActor } from "../../actors/document/actor.ts"
import { DocumentNotFound } from "../../actors/document/errors.ts"
import { CreateDocument, ReviseDocument } from "../../actors/document/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { DEFAULT_PAGE_LIMIT } from "../platform/Paging.ts"
import * as Api from "./Api.ts"
import type { DocumentVersion } from "./Api.ts"
import { documentSummaries, documentVersion } from "./Queries.ts"

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
    const document = yield* documentVersion(workspaceId, documentId, version)
    if (document === undefined) return yield* new DocumentNotFound({ documentId })
    return document
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

export const documentCreate = implement(Api.documentCreate, (invocation, input) => createDocument(invocation, input.title, input.content))

export const documentList = implement(Api.documentList, (invocation, input) =>
  Effect.map(documentSummaries(invocation.workspaceId!, input.limit ?? DEFAULT_PAGE_LIMIT), (documents) => ({ documents }))
)

export const documentRead = implement(Api.documentRead, (invocation, input) => readDocument(invocation.workspaceId!, input.documentId, input.version))

export const documentCapabilities: ReadonlyArray<AnyCapability> = [documentCreate, documentList, documentRead]
