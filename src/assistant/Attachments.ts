/**
 * Uploading attachments (spec 4.1 `assistant/attachments/upload`). The route (gateway/upload.ts)
 * parses a multipart/form-data body into files only once the checkpoint has let the caller in; the
 * rules and the storage are src/assistant/Files.ts's. A chat request then names the files by the
 * `gen_` ids answered here.
 */
import { Effect } from "effect"
import { readAttachments, type Uploader, uploadFiles } from "./Files.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { NotFound } from "../platform/Errors.ts"
import * as Api from "./Api.ts"

/** The caller as the uploader of the files it sends. */
export const uploaderOf = (invocation: Invocation): Uploader => ({
  orgId: invocation.orgId!,
  workspaceId: invocation.workspaceId!,
  userId: invocation.principal.attributedTo
})

export const uploadAttachments = implement(Api.uploadAttachments, (invocation, input) =>
  Effect.gen(function* () {
    const files = yield* uploadFiles(uploaderOf(invocation), input.files, invocation.newId, invocation.meta)
    return { files: files.map(({ fileId, name, mediaType, size }) => ({ id: fileId, name, mediaType, size })) }
  })
)

export const downloadAttachment = implement(Api.downloadAttachment, (invocation, input) =>
  readAttachments(invocation.workspaceId!, [input.fileId]).pipe(
    Effect.catchTag("AttachmentRefused", (refused) =>
      Effect.fail(refused.reason === "attachment_not_found" ? new NotFound({ reason: "file_not_found", message: refused.message }) : refused)
    ),
    Effect.map(([file]) => ({
      id: file.id,
      name: file.name,
      mediaType: file.mediaType,
      size: file.bytes.length,
      contentBase64: Buffer.from(file.bytes).toString("base64")
    }))
  )
)

export const attachmentCapabilities: ReadonlyArray<AnyCapability> = [uploadAttachments, downloadAttachment]
