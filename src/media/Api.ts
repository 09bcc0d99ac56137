/**
 * The media wing's contracts: the capability packs `svc/media-svg` (`svg.generate`),
 * `svc/media-image` (`image.generate`, `image.create`, `image.analyze`, `image.list`) and
 * `svc/media-video` (`video.generate`), on the API, MCP and the agent surface.
 */
import { Schema } from "effect"
import { defineContract } from "../checkpoint/Capability.ts"
import { PageLimit } from "../platform/Paging.ts"

/** Who may make files in the workspace (as for uploads): a viewer only looks. */
const writers = ["org:owner", "workspace:admin", "workspace:member"] as const
const readers = [...writers, "workspace:viewer"] as const

export const Prompt = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4000))
/** Pixels per side of a generated picture. */
export const Side = Schema.Int.pipe(Schema.between(16, 2048))

export const GeneratedFile = Schema.Struct({ fileId: Schema.String, name: Schema.String, mediaType: Schema.String, size: Schema.Number })

const makes = { sensitivity: "low", mutating: true, changesAccess: false, destructive: false, needsApproval: false } as const
const looks = { sensitivity: "low", mutating: false, changesAccess: false, destructive: false, needsApproval: false } as const
const everywhere = ["api", "mcp", "agent"] as const

export const generateSvg = defineContract({
  name: "svg.generate",
  description: "Draw an SVG image from a prompt with the model of a tier (the organization's default when omitted); the SVG is sanitized (no scripts, event handlers, foreignObject or external references) and stored as a gen_ file of the workspace.",
  scope: "workspace",
  input: Schema.Struct({
    prompt: Prompt,
    width: Schema.optional(Side),
    height: Schema.optional(Side),
    /** The model tier (as a chat request's `tier`). */
    tier: Schema.optional(Schema.String.pipe(Schema.maxLength(64)))
  }),
  output: Schema.Struct({ ...GeneratedFile.fields, svg: Schema.String, drawnBy: Schema.Literal("model", "offline") }),
  surfaces: everywhere,
  roles: writers,
  ...makes,
  claimedBy: "svc/media-svg"
})

export const ImageInput = Schema.Struct({ prompt: Prompt, width: Schema.optional(Side), height: Schema.optional(Side) })
export type ImageInput = typeof ImageInput.Type
export const ImageOutput = Schema.Struct({ ...GeneratedFile.fields, width: Schema.Number, height: Schema.Number })

/** What `image.generate` and `image.create` share: they differ in their default size. */
const imageMaking = {
  scope: "workspace",
  input: ImageInput,
  output: ImageOutput,
  surfaces: everywhere,
  roles: writers,
  ...makes,
  claimedBy: "svc/media-image"
} as const

export const generateImage = defineContract({
  ...imageMaking,
  name: "image.generate",
  description: "Generate an image from a prompt (default 512×512; PNG offline) and store it as a gen_ file of the workspace."
})

export const createImage = defineContract({
  ...imageMaking,
  name: "image.create",
  description: "Create an image from a prompt at a given size (default 1024×1024; PNG offline) and store it as a gen_ file of the workspace."
})

export const analyzeImage = defineContract({
  name: "image.analyze",
  description:
    "Describe an image file of the workspace: its format, size in bytes, dimensions (PNG, GIF, JPEG), for PNG its dominant colours, and what a vision model sees in it when one is configured.",
  scope: "workspace",
  input: Schema.Struct({ fileId: Schema.String.pipe(Schema.maxLength(64)) }),
  output: Schema.Struct({
    fileId: Schema.String,
    format: Schema.String,
    size: Schema.Number,
    width: Schema.NullOr(Schema.Number),
    height: Schema.NullOr(Schema.Number),
    dominantColours: Schema.Array(Schema.Struct({ hex: Schema.String, share: Schema.Number })),
    /** What the configured vision model says the image shows; null without one. */
    description: Schema.NullOr(Schema.String)
  }),
  surfaces: everywhere,
  roles: readers,
  ...looks,
  claimedBy: "svc/media-image"
})

export const ImageFile = Schema.Struct({ ...GeneratedFile.fields, createdAt: Schema.String })
export type ImageFile = typeof ImageFile.Type

export const listImages = defineContract({
  name: "image.list",
  description: "List the workspace's image files (generated or uploaded), newest first.",
  scope: "workspace",
  input: Schema.Struct({ limit: Schema.optional(PageLimit) }),
  output: Schema.Struct({ images: Schema.Array(ImageFile) }),
  surfaces: everywhere,
  roles: readers,
  ...looks,
  claimedBy: "svc/media-image"
})

export const generateVideo = defineContract({
  name: "video.generate",
  description: "Generate a video from a prompt with the configured video model (VIDEO_MODEL on the OpenAI-compatible endpoint) and store it as a gen_ file of the workspace; 409 video_provider_unavailable when none is configured.",
  scope: "workspace",
  input: Schema.Struct({ prompt: Prompt, durationSeconds: Schema.optional(Schema.Int.pipe(Schema.between(1, 60))) }),
  output: GeneratedFile,
  surfaces: everywhere,
  roles: writers,
  ...makes,
  claimedBy: "svc/media-video"
})
