/**
 * The media wing's SQL: what it reads of the workspace's stored files (`files`).
 */
import { Effect } from "effect"
import { Db, query } from "../../streams/Db.ts"
import type { ImageFile } from "./Api.ts"

/** Up to `limit` of the workspace's image files, newest first. */
export const imageFiles = (workspaceId: string, limit: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("list images", () => db.sql`
      select file_id, name, media_type, size, uploaded_at from ${db.table("files")}
      where workspace_id = ${workspaceId} and media_type like 'image/%'
      order by uploaded_at desc, file_id desc limit ${limit}`)
    return rows.map((r): ImageFile => ({ fileId: r.file_id, name: r.name, mediaType: r.media_type, size: r.size, createdAt: (r.uploaded_at as Date).toISOString() }))
  })
