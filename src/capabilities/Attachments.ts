/**
 * Uploading attachments (spec 4.1 `assistant/attachments/upload`). The route (gateway/upload.ts)
 * parses a multipart/form-data body into files only once the checkpoint has let the caller in; the
 * rules and the storage are src/assistant/Files.ts's. A chat request then names the files by the
 * `gen_` ids answered here.
 */
import { Effect, Schema } from "effect"
import { type Uploader, uploadFiles } from "../assistant/Files.ts"
import { type AnyCapability, defineCapability, type Invocation } from "../Capabilities.ts"

/** The caller as the uploader of the files it sends. */
export const uploaderOf = (invocation: Invocation): Uploader => ({
  orgId: invocation.orgId!,
  workspaceId: invocation.workspaceId!,
  userId: invocation.principal.attributedTo
})

export const uploadAttachments = defineCapability({
  name: "assistant.attachments.upload",
  description:
    "Upload 1 to 10 files (multipart/form-data, one part with a filename per file) to attach to chat requests; answers each file's gen_ id.",
  scope: "workspace",
  rest: { method: "post", path: "assistant/attachments/upload" },
  input: Schema.Struct({
    files: Schema.Array(
      Schema.Struct({
        name: Schema.String.pipe(Schema.maxLength(255)),
        mediaType: Schema.String.pipe(Schema.maxLength(255)),
        bytes: Schema.Uint8ArrayFromSelf
      })
    )
  }),
  output: Schema.Struct({
    files: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, mediaType: Schema.String, size: Schema.Number }))
  }),
  surfaces: ["api"],
  // who may write in the workspace (as for nodes): a viewer only looks
  roles: ["org:owner", "workspace:admin", "workspace:member"],
  sensitivity: "medium",
  mutating: true,
  changesAccess: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin",
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const files = yield* uploadFiles(uploaderOf(invocation), input.files, invocation.newId, invocation.meta)
      return { files: files.map(({ fileId, name, mediaType, size }) => ({ id: fileId, name, mediaType, size })) }
    })
})

export const attachmentCapabilities: ReadonlyArray<AnyCapability> = [uploadAttachments]
