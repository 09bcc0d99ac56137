/**
 * `POST /v1/{orgSlug}/{workspaceSlug}/assistant/attachments/upload` (spec 4.1, whose request shape
 * is not shown): a multipart/form-data body in which every part with a filename is a file (its
 * `Content-Type` the file's type); other parts are ignored. The capability
 * `assistant.attachments.upload` (src/assistant/Attachments.ts) decides; this route only
 * parses, and only once the checkpoint has let the caller in.
 *
 * The route has a body limit of its own: ten files at the attachment size limit, and room for the
 * multipart framing, instead of the JSON routes' limit.
 */
import busboy from "busboy"
import { Effect } from "effect"
import type uWS from "uWebSockets.js"
import { AttachmentRefused, MAX_ATTACHMENTS, type UploadedFile } from "../src/assistant/Files.ts"
import { invoke } from "../src/checkpoint/Checkpoint.ts"
import { BadRequest } from "../src/platform/Errors.ts"
import { jsonError, PayloadTooLarge, type HttpRequest, route, Streaming } from "./http.ts"
import { replyForExit } from "./errors.ts"
import type { GatewayOptions } from "./options.ts"

const UPLOAD_ROUTE = "/v1/:orgSlug/:workspaceSlug/assistant/attachments/upload"

/** Room for what a body holds besides the files' bytes: boundaries, part headers, form fields. */
const FRAMING_BYTES = 1024 * 1024

const notMultipart = (message: string) => new AttachmentRefused({ reason: "not_multipart", message })

/** The file parts of a multipart/form-data body, in their order. */
const parseParts = (contentType: string, body: Buffer) =>
  new Promise<ReadonlyArray<UploadedFile>>((resolve, reject) => {
    // throws at once on a content type without a boundary
    const parser = busboy({
      headers: { "content-type": contentType },
      // filenames arrive as raw UTF-8 from browsers and fetch, not in RFC 5987 `filename*`
      defParamCharset: "utf8"
    })
    const files: Array<UploadedFile> = []
    parser.on("file", (_field, stream, info) => {
      // a nameless application/octet-stream part, which busboy also calls a file, is no file here
      if (info.filename === undefined) return void stream.resume()
      const chunks: Array<Buffer> = []
      const index = files.push({ name: info.filename, mediaType: info.mimeType, bytes: Buffer.alloc(0) }) - 1
      // a body that breaks off fails the part's stream as well as the parser
      stream.on("error", reject)
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        files[index] = { ...files[index], bytes: Buffer.concat(chunks) }
      })
    })
    parser.on("error", reject)
    // after every file stream has ended
    parser.on("close", () => resolve(files))
    parser.end(body)
  })

/** The upload as the capability's input. */
const inputOf = (files: ReadonlyArray<UploadedFile>) => ({
  files: files.map(({ name, mediaType, bytes }) => ({ name, mediaType, bytes }))
})

const readUpload = (req: HttpRequest) =>
  Effect.gen(function* () {
    const contentType = req.headers["content-type"] ?? ""
    if (!/^multipart\/form-data\s*(;|$)/i.test(contentType)) {
      return yield* notMultipart(`send the files as multipart/form-data, not ${contentType || "a body without a Content-Type"}`)
    }
    const body = yield* Effect.tryPromise({
      try: () => req.body(),
      catch: (error) => (error instanceof PayloadTooLarge ? error : new BadRequest({ reason: "unreadable_body", message: "the request body could not be read" }))
    })
    const files = yield* Effect.tryPromise({
      try: () => parseParts(contentType, body),
      catch: (error) => notMultipart(`the body is not valid multipart/form-data: ${error instanceof Error ? error.message : String(error)}`)
    })
    return inputOf(files)
  })

const decodeSlug = (slug: string) => {
  try {
    return decodeURIComponent(slug)
  } catch {
    return undefined
  }
}

/** The upload's handler: the checkpoint, with the parsed body as the capability's input. */
const upload = (options: Pick<GatewayOptions, "run">) => async (req: HttpRequest) => {
  const orgSlug = decodeSlug(req.params[0])
  const workspaceSlug = decodeSlug(req.params[1])
  if (orgSlug === undefined || workspaceSlug === undefined) {
    return jsonError(400, "bad_request", "the path is not valid percent-encoded UTF-8", "invalid_path")
  }
  const exit = await options.run(
    invoke({
      authorization: req.headers.authorization,
      cookie: req.headers.cookie,
      surface: "api",
      capability: "assistant.attachments.upload",
      path: { orgSlug, workspaceSlug },
      input: readUpload(req),
      idempotencyKey: req.headers["idempotency-key"],
      trace: req
    })
  )
  // an oversized body has already been answered 413
  if (exit._tag === "Failure" && exit.cause._tag === "Fail" && exit.cause.error instanceof PayloadTooLarge) return Streaming
  return replyForExit(exit)
}

/** Registers the upload route; its body limit follows the node's attachment size limit. */
export const uploadRoutes = (app: uWS.TemplatedApp, options: Pick<GatewayOptions, "run" | "maxAttachmentBytes">): void => {
  route(app, "post", UPLOAD_ROUTE, upload(options), { maxBodyBytes: MAX_ATTACHMENTS * options.maxAttachmentBytes + FRAMING_BYTES })
}
