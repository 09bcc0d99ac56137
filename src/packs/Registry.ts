/**
 * The capability-pack registry (spec 2.9): the first-party packs' manifests, and the check a node
 * runs at start against its capability registry. A capability whose `claimedBy` names a pack runs
 * only for an organization that installed and enabled that pack (the checkpoint's entitlement).
 */
import { Context, Layer } from "effect"
import type { Registry } from "../checkpoint/Capability.ts"

export interface PackManifest {
  /** `svc/<slug>`: unique and stable (it is the listing's name once installed). */
  readonly id: string
  readonly name: string
  readonly description: string
  /** Semver. */
  readonly version: string
  readonly tier: "free" | "premium"
  readonly visibility: "hidden" | "preview" | "beta" | "ga"
  readonly category: string
  readonly icon?: string
  /** The capability names the pack claims; never empty. */
  readonly contracts: ReadonlyArray<string>
  /** Recorded, not enforced yet (spec 2.9). */
  readonly minPlanTier?: "free" | "build" | "scale" | "enterprise"
  /** Empty for first-party packs. */
  readonly scopes: ReadonlyArray<string>
}

export const firstPartyPacks: ReadonlyArray<PackManifest> = [
  {
    id: "svc/media-video",
    name: "Video generation",
    description: "Generate short videos from a prompt through a configured video provider.",
    version: "1.0.0",
    tier: "premium",
    visibility: "ga",
    category: "media",
    contracts: ["video.generate"],
    minPlanTier: "scale",
    scopes: []
  },
  {
    id: "svc/media-image",
    name: "Images",
    description: "Generate, create, analyze and list workspace images.",
    version: "1.0.0",
    tier: "free",
    visibility: "ga",
    category: "media",
    contracts: ["image.generate", "image.create", "image.analyze", "image.list"],
    scopes: []
  },
  {
    id: "svc/media-svg",
    name: "SVG graphics",
    description: "Have a model draw sanitized SVG graphics, stored as workspace files.",
    version: "1.0.0",
    tier: "free",
    visibility: "ga",
    category: "media",
    contracts: ["svg.generate"],
    scopes: []
  },
  {
    id: "svc/documents",
    name: "Documents",
    description: "Have a model write workspace documents from a prompt and render documents to PDF.",
    version: "1.0.0",
    tier: "free",
    visibility: "ga",
    category: "documents",
    contracts: ["documents.generate", "documents.pdf.create"],
    scopes: []
  }
]

const PACK_ID = /^svc\/[a-z0-9]+(?:-[a-z0-9]+)*$/
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/

export interface PackRegistry {
  readonly packs: ReadonlyArray<PackManifest>
  readonly byId: ReadonlyMap<string, PackManifest>
}

export class Packs extends Context.Tag("svc/Packs")<Packs, PackRegistry>() {}

/**
 * What is wrong with the manifests against the capabilities registered, one sentence per fault
 * (empty when valid). `registered` lists every capability's name and claim.
 */
export const packFaults = (
  manifests: ReadonlyArray<PackManifest>,
  registered: ReadonlyArray<{ readonly name: string; readonly claimedBy: string }>
): ReadonlyArray<string> => {
  const faults: Array<string> = []
  const claimOf = new Map(registered.map((c) => [c.name, c.claimedBy]))
  const ids = new Set<string>()
  const claimant = new Map<string, string>()
  for (const pack of manifests) {
    if (!PACK_ID.test(pack.id)) faults.push(`pack id ${JSON.stringify(pack.id)} is not svc/<slug>`)
    if (ids.has(pack.id)) faults.push(`pack id ${pack.id} is used twice`)
    ids.add(pack.id)
    if (!SEMVER.test(pack.version)) faults.push(`pack ${pack.id}: version ${JSON.stringify(pack.version)} is not semver`)
    if (pack.contracts.length === 0) faults.push(`pack ${pack.id} claims no capability (contracts is empty)`)
    for (const name of pack.contracts) {
      const other = claimant.get(name)
      if (other !== undefined) faults.push(`capability ${name} is claimed by both ${other} and ${pack.id}`)
      else claimant.set(name, pack.id)
      const claim = claimOf.get(name)
      if (claim === undefined) faults.push(`pack ${pack.id} claims unknown capability ${name}`)
      else if (claim !== pack.id) faults.push(`pack ${pack.id} claims ${name}, but that capability says claimedBy ${claim}`)
    }
  }
  // the other direction: a capability naming a pack that does not list it would escape entitlement checks' intent
  for (const { name, claimedBy } of registered) {
    if (claimedBy !== "builtin" && claimant.get(name) !== claimedBy) faults.push(`capability ${name} says claimedBy ${claimedBy}, but no such pack claims it`)
  }
  return faults
}

/** The pack registry, validated: throws naming every fault, so a node does not start on an invalid one. */
export const makePackRegistry = (manifests: ReadonlyArray<PackManifest>, capabilities: Pick<Registry, "all">): PackRegistry => {
  const faults = packFaults(manifests, capabilities.all)
  if (faults.length > 0) throw new Error(`invalid capability-pack registry: ${faults.join("; ")}`)
  return { packs: manifests, byId: new Map(manifests.map((pack) => [pack.id, pack])) }
}

/** The node's pack registry, checked as the node starts. */
export const layer = (capabilities: Registry) => Layer.sync(Packs, () => makePackRegistry(firstPartyPacks, capabilities))
