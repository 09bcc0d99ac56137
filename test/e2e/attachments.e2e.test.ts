/**
 * Attachments end to end (spec 2.1 `gen_`, 2.2, 4.1, 7.1): multipart uploads over real HTTP against
 * a real node, as the bootstrap Owner's workspace key, then what the chat engine reads of them
 * (`checkAttachments`, `readAttachments`). Every refusal is 400 `attachment_refused` with its
 * reason and stores nothing. The node's attachment limit is lowered to 200 KiB, so that the size
 * rules cost little to reach while ten files at the limit still pass the JSON routes' 1 MiB.
 */
import { Effect, Runtime } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AttachmentRefused, checkAttachments, filesSchemaOf, readAttachments } from "../../src/assistant/Files.ts"
import { loadConfig } from "../../src/platform/Config.ts"
import type { DbError } from "../../streams/Db.ts"
import { addPerson, bootstrapPlace, signIn } from "../support/people.ts"
import { otherWorkspaceWithKey } from "../support/places.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { eventsOf, expectError, type Reply, send } from "./client.ts"

const MAX_BYTES = 200 * 1024

let node: TestNode
let run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>
let place: { orgId: string; workspaceId: string }
/** A workspace key of the `other` workspace. */
let otherKey: string

interface Sample {
  readonly name: string
  readonly type: string
  readonly bytes: Uint8Array
}

const bytesOf = (...parts: ReadonlyArray<string | ReadonlyArray<number>>) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "latin1") : Buffer.from(p))))

const text = (name: string, type: string, content: string): Sample => ({ name, type, bytes: Buffer.from(content, "utf8") })

/** One file of every allowed type, with bytes that agree with it. */
const samples: ReadonlyArray<Sample> = [
  text("notes.txt", "text/plain", "plain notes\n"),
  text("readme.md", "text/markdown", "# Title\n\nbody ✓\n"),
  text("table.csv", "text/csv", "a,b\n1,2\n"),
  text("data.json", "application/json", '{"a":1}'),
  { name: "doc.pdf", type: "application/pdf", bytes: bytesOf("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n%%EOF\n") },
  { name: "pic.png", type: "image/png", bytes: bytesOf([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], [0, 0, 0, 13], "IHDR") },
  { name: "pic.jpg", type: "image/jpeg", bytes: bytesOf([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10], "JFIF\0") },
  { name: "pic.gif", type: "image/gif", bytes: bytesOf("GIF89a", [1, 0, 1, 0, 0, 0, 0]) },
  { name: "pic.webp", type: "image/webp", bytes: bytesOf("RIFF", [26, 0, 0, 0], "WEBPVP8 ", [0, 0, 0, 0]) },
  text("résumé ✓.txt", "text/plain; charset=utf-8", "accents é and marks ✓\n")
]

const form = (files: ReadonlyArray<Sample>, fields: Readonly<Record<string, string>> = {}) => {
  const body = new FormData()
  for (const [name, value] of Object.entries(fields)) body.append(name, value)
  for (const file of files) body.append("file", new Blob([file.bytes], { type: file.type }), file.name)
  return body
}

const uploadPath = (workspaceSlug = node.bootstrap.workspaceSlug) =>
  `/v1/${node.bootstrap.orgSlug}/${workspaceSlug}/assistant/attachments/upload`

type Body = RequestInit["body"]

interface UploadOptions {
  /** The raw key; the bootstrap workspace key when omitted, none when null. */
  readonly key?: string | null
  readonly workspaceSlug?: string
  readonly headers?: Readonly<Record<string, string>>
}

const upload = (body: Body, options: UploadOptions = {}) => {
  const key = options.key === undefined ? node.bootstrap.workspaceKey : options.key
  return send(node, uploadPath(options.workspaceSlug), {
    method: "POST",
    headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...options.headers },
    body
  })
}

interface Uploaded {
  readonly id: string
  readonly name: string
  readonly mediaType: string
  readonly size: number
}

const uploaded = (reply: Reply): ReadonlyArray<Uploaded> => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  expect(Object.keys(reply.body)).toEqual(["files"])
  return reply.body.files
}

/** Rows in `files` and in the content table: what an upload stored. */
const stored = async () => {
  const [files] = await node.db.sql`select count(*)::int as count from ${node.db.table("files")}`
  const [contents] = await node.db.sql`select count(*)::int as count from ${node.db.sql(`${filesSchemaOf(node.db.schema)}.file_contents`)}`
  return { files: files.count as number, contents: contents.count as number }
}

/** Asserts a refusal that stored nothing. */
const expectNothingStored = async (request: () => Promise<Reply>, status: number, code: string, reason: string | undefined) => {
  const before = await stored()
  expectError(await request(), status, code, reason)
  expect(await stored()).toEqual(before)
}

const refusalOf = (effect: Effect.Effect<unknown, AttachmentRefused | DbError, any>) =>
  run(Effect.flip(effect)) as Promise<AttachmentRefused>

beforeAll(async () => {
  node = await startTestNode({ assistant: { ...loadConfig({}).assistant, maxAttachmentBytes: MAX_BYTES } })
  run = (effect) => Runtime.runPromise(node.runtime)(effect as Effect.Effect<any, any, never>)
  place = await bootstrapPlace(node)
  otherKey = (await otherWorkspaceWithKey(node, { person: "bob", keyName: "other workspace key" })).key
}, 120_000)

afterAll(async () => {
  await node?.stop()
})

describe("uploading", () => {
  it("stores one file: a gen_ id, a files row, one event without the bytes, and the bytes apart", async () => {
    const sample = samples[0]
    const [file, ...rest] = uploaded(await upload(form([sample])))
    expect(rest).toEqual([])
    expect(file).toEqual({ id: expect.stringMatching(/^gen_[0-9a-f]{32}$/), name: "notes.txt", mediaType: "text/plain", size: sample.bytes.length })

    const [{ user_id: owner }] = await node.db.sql`
      select user_id from ${node.db.table("org_members")} where org_id = ${place.orgId} and role = 'owner'`
    const [row] = await node.db.sql`select * from ${node.db.table("files")} where file_id = ${file.id}`
    expect(row).toEqual({
      file_id: file.id,
      org_id: place.orgId,
      workspace_id: place.workspaceId,
      // the key's creator
      user_id: owner,
      name: "notes.txt",
      media_type: "text/plain",
      size: sample.bytes.length,
      sha256: createHash("sha256").update(sample.bytes).digest("hex"),
      uploaded_at: expect.any(Date)
    })

    const events = await eventsOf(node, `file:${file.id}`)
    expect(events.map((e) => e.type)).toEqual(["file.uploaded"])
    expect(Object.keys(events[0].payload).sort()).toEqual(["fileId", "mediaType", "name", "orgId", "sha256", "size", "uploadedAt", "userId", "workspaceId"])
    expect(events[0].payload.sha256).toBe(row.sha256)

    const [content] = await node.db.sql`
      select bytes from ${node.db.sql(`${filesSchemaOf(node.db.schema)}.file_contents`)} where file_id = ${file.id}`
    expect(Buffer.compare(content.bytes, Buffer.from(sample.bytes))).toBe(0)
  })

  it("stores ten files, one of each allowed type, in the order sent", async () => {
    const files = uploaded(await upload(form(samples)))
    expect(files.map((f) => [f.name, f.mediaType, f.size])).toEqual(
      samples.map((s) => [s.name, s.type.split(";")[0], s.bytes.length])
    )
    expect(new Set(files.map((f) => f.id)).size).toBe(10)

    // what the chat engine reads of them
    const rows = await run(checkAttachments(place.workspaceId, files.map((f) => f.id)))
    expect(rows.map((r) => [r.id, r.name, r.mediaType, r.size])).toEqual(files.map((f) => [f.id, f.name, f.mediaType, f.size]))
    const contents = await run(readAttachments(place.workspaceId, files.map((f) => f.id)))
    expect(contents.map((c) => [c.id, Buffer.from(c.bytes).toString("base64")])).toEqual(
      files.map((f, i) => [f.id, Buffer.from(samples[i].bytes).toString("base64")])
    )
  })

  it("takes ten files at the limit: the route's body limit is its own, above the JSON routes' 1 MiB", async () => {
    const full = Array.from({ length: 10 }, (_, i) => ({ name: `full-${i}.csv`, type: "text/csv", bytes: Buffer.alloc(MAX_BYTES, 48 + i) }))
    const files = uploaded(await upload(form(full)))
    expect(files.map((f) => f.size)).toEqual(full.map(() => MAX_BYTES))
  })

  it("ignores parts without a filename", async () => {
    const files = uploaded(await upload(form([samples[1]], { purpose: "chat" })))
    expect(files.map((f) => f.name)).toEqual(["readme.md"])
  })

  it("takes no nameless part as a file, not even an application/octet-stream one", async () => {
    const body = [
      "--b0undary",
      'Content-Disposition: form-data; name="blob"',
      "Content-Type: application/octet-stream",
      "",
      "not a file",
      "--b0undary",
      'Content-Disposition: form-data; name="file"; filename="kept.txt"',
      "Content-Type: text/plain",
      "",
      "kept",
      "--b0undary--",
      ""
    ].join("\r\n")
    const files = uploaded(await upload(body, { headers: { "content-type": "multipart/form-data; boundary=b0undary" } }))
    expect(files.map((f) => [f.name, f.size])).toEqual([["kept.txt", 4]])
  })

  it("answers the same ids to a retry with the same Idempotency-Key, and records each file once", async () => {
    const headers = { "idempotency-key": randomUUID() }
    const first = uploaded(await upload(form([samples[2], samples[3]]), { headers }))
    const again = uploaded(await upload(form([samples[2], samples[3]]), { headers }))
    expect(again).toEqual(first)
    for (const file of first) expect((await eventsOf(node, `file:${file.id}`)).length).toBe(1)
  })
})

describe("refusals: 400 attachment_refused, nothing stored", () => {
  const over = { name: "big.txt", type: "text/plain", bytes: Buffer.alloc(MAX_BYTES + 1, 97) }
  const cases: ReadonlyArray<{ readonly reason: string; readonly name: string; readonly body: () => Body; readonly headers?: Record<string, string> }> = [
    { reason: "not_multipart", name: "a JSON body", body: () => JSON.stringify({ files: [] }), headers: { "content-type": "application/json" } },
    { reason: "not_multipart", name: "a multipart type without a boundary", body: () => "--x--\r\n", headers: { "content-type": "multipart/form-data" } },
    { reason: "not_multipart", name: "a body that breaks off", body: () => "--xyz\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n\r\nabc", headers: { "content-type": "multipart/form-data; boundary=xyz" } },
    { reason: "no_files", name: "a form with fields only", body: () => form([], { content: "hello" }) },
    { reason: "too_many_files", name: "eleven files", body: () => form([...samples, samples[0]]) },
    { reason: "file_too_large", name: "a file one byte over the limit", body: () => form([samples[0], over]) },
    { reason: "empty_file", name: "an empty file", body: () => form([{ name: "empty.txt", type: "text/plain", bytes: new Uint8Array(0) }]) },
    { reason: "unsupported_type", name: "a zip archive", body: () => form([{ name: "a.zip", type: "application/zip", bytes: bytesOf("PK\x03\x04") }]) },
    { reason: "unsupported_type", name: "a file without a type", body: () => form([{ name: "a.bin", type: "", bytes: bytesOf("data") }]) },
    { reason: "content_mismatch", name: "a JPEG declared PNG", body: () => form([{ ...samples[6], type: "image/png" }]) },
    { reason: "content_mismatch", name: "a PDF without its header", body: () => form([{ name: "x.pdf", type: "application/pdf", bytes: bytesOf("hello") }]) },
    { reason: "content_mismatch", name: "text that is not UTF-8", body: () => form([{ name: "latin.txt", type: "text/plain", bytes: bytesOf("caf\xe9") }]) },
    // the whole upload goes: the good files before a bad one are not kept
    { reason: "content_mismatch", name: "good files and then a bad one", body: () => form([samples[0], samples[5], { ...samples[5], name: "fake.gif", type: "image/gif" }]) }
  ]
  for (const c of cases) {
    it(`${c.reason}: ${c.name}`, () => expectNothingStored(() => upload(c.body(), { headers: c.headers }), 400, "attachment_refused", c.reason))
  }

  it("413 for a body over ten files at the limit and their framing", async () => {
    const huge = { name: "huge.txt", type: "text/plain", bytes: Buffer.alloc(10 * MAX_BYTES + 1024 * 1024 + 1, 97) }
    await expectNothingStored(() => upload(form([huge])), 413, "payload_too_large", undefined)
  })
})

describe("who may upload", () => {
  it("401 without a credential", () => expectNothingStored(() => upload(form([samples[0]]), { key: null }), 401, "unauthorized", "missing_credential"))

  it("403 key_scope_mismatch for a key of another workspace", () =>
    expectNothingStored(() => upload(form([samples[0]]), { key: otherKey }), 403, "forbidden", "key_scope_mismatch"))

  it("403 for a workspace viewer", async () => {
    const viewer = await addPerson(node, "viewer", { org: "member", workspace: "viewer" })
    const { cookie } = await signIn(node.baseUrl, viewer)
    await expectNothingStored(() => upload(form([samples[0]]), { key: null, headers: { cookie } }), 403, "forbidden", undefined)
  })
})

describe("what a chat request may attach", () => {
  it("refuses a file of another workspace, an unknown id and more than ten ids", async () => {
    const [theirs] = uploaded(await upload(form([samples[0]]), { key: otherKey, workspaceSlug: "other" }))
    const [ours] = uploaded(await upload(form([samples[0]])))
    expect((await run(checkAttachments("wsp_other", [theirs.id]))).map((r) => r.id)).toEqual([theirs.id])

    expect(await refusalOf(checkAttachments(place.workspaceId, [ours.id, theirs.id]))).toMatchObject({ _tag: "AttachmentRefused", reason: "attachment_not_found" })
    expect(await refusalOf(readAttachments(place.workspaceId, [theirs.id]))).toMatchObject({ reason: "attachment_not_found" })
    expect(await refusalOf(checkAttachments(place.workspaceId, [`gen_${"0".repeat(32)}`]))).toMatchObject({ reason: "attachment_not_found" })
    expect(await refusalOf(checkAttachments(place.workspaceId, Array.from({ length: 11 }, () => ours.id)))).toMatchObject({ reason: "too_many_files" })
    expect(await run(checkAttachments(place.workspaceId, []))).toEqual([])
  })

  it("refuses a file whose bytes are gone with content_unreadable", async () => {
    const [file] = uploaded(await upload(form([samples[3]])))
    await node.db.sql`delete from ${node.db.sql(`${filesSchemaOf(node.db.schema)}.file_contents`)} where file_id = ${file.id}`
    expect((await run(checkAttachments(place.workspaceId, [file.id]))).map((r) => r.id)).toEqual([file.id])
    expect(await refusalOf(readAttachments(place.workspaceId, [file.id]))).toMatchObject({ reason: "content_unreadable" })
  })
})
