/**
 * The documents wing's SQL: its read models `documents` and `document_versions` (projected from the
 * `document` actor).
 */
import { Effect } from "effect"
import { Db, query } from "../../streams/Db.ts"
import type { DocumentSummary, DocumentVersion } from "./Api.ts"

/** A document of the workspace at a version (its latest when none is named), if there is one. */
export const documentVersion = (workspaceId: string, documentId: string, version: number | undefined) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("read document", () => db.sql`
      select d.document_id, v.title, v.version, d.created_by, d.created_at, v.created_at as updated_at, v.content
      from ${db.table("documents")} d join ${db.table("document_versions")} v on v.document_id = d.document_id
      where d.workspace_id = ${workspaceId} and d.document_id = ${documentId} and v.version = ${version ?? db.sql`d.version`}`)
    if (rows.length === 0) return undefined
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

/** Up to `limit` of the workspace's documents, the most recently changed first. */
export const documentSummaries = (workspaceId: string, limit: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("list documents", () => db.sql`
      select document_id, title, version, created_by, created_at, updated_at from ${db.table("documents")}
      where workspace_id = ${workspaceId}
      order by updated_at desc, document_id limit ${limit}`)
    return rows.map((r): DocumentSummary => ({
      documentId: r.document_id as string,
      title: r.title as string,
      version: r.version as number,
      createdBy: r.created_by as string,
      createdAt: (r.created_at as Date).toISOString(),
      updatedAt: (r.updated_at as Date).toISOString()
    }))
  })
