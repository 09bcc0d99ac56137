/**
 * Spec 4.5: browsing capability packs lists `beta` and `ga` packs; `hidden` and `preview` ones are
 * left out, whatever the search. Test manifests, one of each visibility.
 */
import { describe, expect, it } from "vitest"
import { browsePacks } from "../../src/marketplace/PluginCatalog.ts"
import type { PackManifest } from "../../src/packs/Registry.ts"

const pack = (visibility: PackManifest["visibility"]): PackManifest => ({
  id: `svc/${visibility}-pack`,
  name: `A ${visibility} pack`,
  description: "Lists things for the test.",
  version: "1.0.0",
  tier: "free",
  visibility,
  category: "test",
  contracts: [`${visibility}.list`],
  scopes: []
})

const manifests = [pack("hidden"), pack("preview"), pack("beta"), pack("ga")]

describe("browsing capability packs", () => {
  it.each([
    ["no search", {}],
    ["a search every pack matches", { search: "pack" }],
    ["the category", { category: "test" }]
  ])("%s: the beta and ga packs, not the hidden or preview ones", (_, input) => {
    expect(browsePacks(manifests, input).map((server) => server.serverId)).toEqual(["svc/beta-pack", "svc/ga-pack"])
  })

  it("a search naming a hidden or preview pack finds nothing", () => {
    expect(browsePacks(manifests, { search: "hidden" })).toEqual([])
    expect(browsePacks(manifests, { search: "preview" })).toEqual([])
  })
})
