/**
 * The file actor (`file:<fileId>`, one uploaded attachment) as decider specifications, the `files`
 * row its projection writes, and the upload's rules (`acceptUpload`) as a table. The rules are
 * pure: the same table holds over HTTP in test/e2e/attachments.e2e.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { FileActor } from "../../actors/file/actor.ts"
import { FileAlreadyExists } from "../../actors/file/errors.ts"
import { FileUploaded } from "../../actors/file/events.ts"
import { UploadFile } from "../../actors/file/protocol.ts"
import { FileState } from "../../actors/file/state.ts"
import { keyOf } from "../../actors/kernel.ts"
import { acceptUpload, type UploadedFile } from "../../src/assistant/Files.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const T0 = "2024-05-01T12:00:00.000Z"
const fileId = "gen_00000000000000000000000000000001"
const upload = {
  fileId,
  orgId: "org_1",
  workspaceId: "wsp_1",
  userId: "usr_1",
  name: "notes.txt",
  mediaType: "text/plain",
  size: 12,
  sha256: "ab".repeat(32)
}
const uploaded = new FileUploaded({ ...upload, uploadedAt: T0 })

describe("file decider", () => {
  it("records an upload at the command's time", () =>
    spec(FileActor).given([]).when(new UploadFile(upload), meta({ at: T0 })).then([uploaded]))

  it("refuses a second upload under the same id", () =>
    spec(FileActor).given([uploaded]).when(new UploadFile({ ...upload, name: "other.txt" })).thenThrows(new FileAlreadyExists({ fileId })))

  it.effect("its state survives the JSON it is stored as", () =>
    Effect.gen(function* () {
      const state = FileActor.evolve(FileActor.initialState, uploaded)
      expect(yield* jsonRoundTrip(FileState, state)).toEqual(state)
    })
  )

  it("projects one files row", () =>
    expect(projectedRows(FileActor, keyOf(FileActor, fileId), [[uploaded, T0]])).toEqual({
      files: [
        {
          file_id: fileId,
          org_id: "org_1",
          workspace_id: "wsp_1",
          user_id: "usr_1",
          name: "notes.txt",
          media_type: "text/plain",
          size: 12,
          sha256: "ab".repeat(32),
          uploaded_at: T0
        }
      ]
    }))
})

describe("upload rules", () => {
  const file = (mediaType: string, bytes: string | Uint8Array, name = "f"): UploadedFile => ({
    name,
    mediaType,
    bytes: typeof bytes === "string" ? Buffer.from(bytes, "latin1") : bytes
  })
  const reasonOf = (files: ReadonlyArray<UploadedFile>, maxBytes = 100) =>
    Either.match(acceptUpload(files, maxBytes), { onLeft: (e) => e.reason, onRight: () => "accepted" })

  const table: ReadonlyArray<readonly [string, ReadonlyArray<UploadedFile>, string]> = [
    ["nothing", [], "no_files"],
    ["eleven files", Array.from({ length: 11 }, () => file("text/plain", "x")), "too_many_files"],
    ["ten files", Array.from({ length: 10 }, () => file("text/plain", "x")), "accepted"],
    ["an empty file", [file("text/plain", "")], "empty_file"],
    ["a file at the limit", [file("text/plain", "x".repeat(100))], "accepted"],
    ["a file over the limit", [file("text/plain", "x".repeat(101))], "file_too_large"],
    ["an unlisted type", [file("application/zip", "PK\x03\x04")], "unsupported_type"],
    ["no type", [file("", "x")], "unsupported_type"],
    ["a type with parameters, in capitals", [file("Text/Plain; charset=utf-8", "x")], "accepted"],
    ["UTF-8 text", [file("text/markdown", Buffer.from("é ✓", "utf8"))], "accepted"],
    ["text that is not UTF-8", [file("text/csv", "caf\xe9")], "content_mismatch"],
    ["JSON that is not UTF-8", [file("application/json", "\xff")], "content_mismatch"],
    ["a PDF", [file("application/pdf", "%PDF-1.7\n")], "accepted"],
    ["a PDF without its header", [file("application/pdf", "PDF")], "content_mismatch"],
    ["a PNG", [file("image/png", "\x89PNG\r\n\x1a\n")], "accepted"],
    ["a PNG cut short", [file("image/png", "\x89PNG")], "content_mismatch"],
    ["a JPEG", [file("image/jpeg", "\xff\xd8\xff\xe0")], "accepted"],
    ["a JPEG declared PNG", [file("image/png", "\xff\xd8\xff\xe0")], "content_mismatch"],
    ["a GIF87a", [file("image/gif", "GIF87a")], "accepted"],
    ["a GIF89a", [file("image/gif", "GIF89a")], "accepted"],
    ["a WebP", [file("image/webp", "RIFF\0\0\0\0WEBP")], "accepted"],
    ["a RIFF that is not WebP", [file("image/webp", "RIFF\0\0\0\0WAVE")], "content_mismatch"],
    ["a good file before a bad one", [file("text/plain", "x"), file("image/gif", "x")], "content_mismatch"]
  ]
  for (const [name, files, reason] of table) it(`${name}: ${reason}`, () => expect(reasonOf(files)).toBe(reason))

  it("answers the accepted files with their type reduced to type/subtype and their size", () =>
    expect(acceptUpload([file("Text/Plain; charset=utf-8", "abc", "a.txt")], 100)).toEqual(
      Either.right([{ name: "a.txt", mediaType: "text/plain", bytes: Buffer.from("abc"), size: 3 }])
    ))
})
