/**
 * The documents wing's contracts: workspace documents (spec 2.9: builtin `document.create`,
 * `document.list`, `document.read`) and the `svc/documents` capability pack (`documents.generate`,
 * `documents.pdf.create`), on the API, MCP and the agent surface.
 */
import { Schema } from "effect"
import { defineContract, type Role } from "../checkpoint/Capability.ts"
import { PageLimit } from "../platform/Paging.ts"

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
export type DocumentSummary = typeof DocumentSummary.Type

export const DocumentVersion = Schema.Struct({
  ...DocumentSummary.fields,
  content: Schema.String
})
export type DocumentVersion = typeof DocumentVersion.Type

export const documentCreate = defineContract({
  ...writes,
  name: "document.create",
  description: "Create a workspace document: a title and Markdown content, at version 1.",
  input: Schema.Struct({ title: Title, content: Markdown }),
  output: DocumentVersion
})

export const documentList = defineContract({
  ...reads,
  name: "document.list",
  description: "The workspace's documents (title, latest version), the most recently changed first.",
  input: Schema.Struct({ limit: Schema.optional(PageLimit) }),
  output: Schema.Struct({ documents: Schema.Array(DocumentSummary) })
})

export const documentRead = defineContract({
  ...reads,
  name: "document.read",
  description: "A workspace document's title and Markdown content, at its latest version or the version named.",
  input: Schema.Struct({ documentId: Schema.String.pipe(Schema.maxLength(64)), version: Schema.optional(Schema.Int.pipe(Schema.positive())) }),
  output: DocumentVersion
})

export const DOCUMENTS_PACK = "svc/documents"

const packWrites = {
  scope: "workspace",
  surfaces: ["api", "mcp", "agent"],
  roles: writers,
  sensitivity: "low",
  mutating: true,
  changesAccess: false,
  destructive: false,
  needsApproval: false,
  claimedBy: DOCUMENTS_PACK
} as const

export const documentsPdfCreate = defineContract({
  ...packWrites,
  name: "documents.pdf.create",
  description:
    "Render a workspace document (its latest version, or the version named) to PDF with its headings, lists and tables; answers the gen_ id of the stored file (download it with assistant.attachments.download).",
  input: Schema.Struct({ documentId: Schema.String.pipe(Schema.maxLength(64)), version: Schema.optional(Schema.Int.pipe(Schema.positive())) }),
  output: Schema.Struct({
    fileId: Schema.String,
    name: Schema.String,
    mediaType: Schema.Literal("application/pdf"),
    size: Schema.Number,
    documentId: Schema.String,
    version: Schema.Int
  })
})

export const documentsGenerate = defineContract({
  ...packWrites,
  name: "documents.generate",
  description:
    "Have a model write a Markdown document from a prompt into the workspace: a new document, or a new version of the document named by documentId. Answers the document.",
  input: Schema.Struct({
    prompt: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(20_000)),
    title: Schema.optional(Title),
    /** Write a new version of this document instead of a new one. */
    documentId: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
    /** The model tier (as a chat request's `tier`); the organization's default when omitted. */
    tier: Schema.optional(Schema.String.pipe(Schema.maxLength(64)))
  }),
  output: DocumentVersion
})
