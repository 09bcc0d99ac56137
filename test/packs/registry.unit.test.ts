import { describe, expect, it } from "vitest"
import { registry } from "../../bin/App.ts"
import { firstPartyPacks, makePackRegistry, type PackManifest, packFaults } from "../../src/packs/Registry.ts"

const pack = (id: string, contracts: ReadonlyArray<string>): PackManifest => ({
  id,
  name: id,
  description: "",
  version: "1.0.0",
  tier: "free",
  visibility: "ga",
  category: "test",
  contracts,
  scopes: []
})

const capabilities = [
  { name: "a.one", claimedBy: "svc/a" },
  { name: "a.two", claimedBy: "svc/a" },
  { name: "b.one", claimedBy: "svc/b" },
  { name: "plain", claimedBy: "builtin" }
]

describe("pack registry validation", () => {
  it.each([
    { fault: "none", packs: [pack("svc/a", ["a.one", "a.two"]), pack("svc/b", ["b.one"])], expected: [] },
    {
      fault: "duplicate claim",
      packs: [pack("svc/a", ["a.one", "a.two"]), pack("svc/b", ["b.one", "a.one"])],
      expected: ["capability a.one is claimed by both svc/a and svc/b", "pack svc/b claims a.one, but that capability says claimedBy svc/a"]
    },
    {
      fault: "unknown capability",
      packs: [pack("svc/a", ["a.one", "a.two", "a.three"]), pack("svc/b", ["b.one"])],
      expected: ["pack svc/a claims unknown capability a.three"]
    },
    {
      fault: "empty contracts",
      packs: [pack("svc/a", ["a.one", "a.two"]), pack("svc/b", ["b.one"]), pack("svc/c", [])],
      expected: ["pack svc/c claims no capability (contracts is empty)"]
    },
    {
      fault: "bad id",
      packs: [pack("svc/a", ["a.one", "a.two"]), pack("svc/b", ["b.one"]), pack("media", ["plain"])],
      expected: ['pack id "media" is not svc/<slug>', "pack media claims plain, but that capability says claimedBy builtin"]
    },
    {
      fault: "id used twice",
      packs: [pack("svc/a", ["a.one"]), pack("svc/a", ["a.two"]), pack("svc/b", ["b.one"])],
      expected: ["pack id svc/a is used twice"]
    },
    {
      fault: "capability claiming a pack that does not list it",
      packs: [pack("svc/a", ["a.one"]), pack("svc/b", ["b.one"])],
      expected: ["capability a.two says claimedBy svc/a, but no such pack claims it"]
    }
  ])("$fault", ({ packs, expected }) => {
    expect(packFaults(packs, capabilities)).toEqual(expected)
  })

  it("an invalid registry stops the start naming the fault", () => {
    const all = capabilities.map((c) => ({ ...c }) as never)
    expect(() => makePackRegistry([pack("svc/a", ["a.one", "a.two"]), pack("svc/b", ["b.one", "a.one"])], { all })).toThrow(
      "invalid capability-pack registry: capability a.one is claimed by both svc/a and svc/b"
    )
  })

  it("the first-party packs validate against the node's capabilities, each capability claimed by its pack", () => {
    const packs = makePackRegistry(firstPartyPacks, registry)
    expect(packs.packs.map((p) => p.id)).toEqual(["svc/media-video", "svc/media-image", "svc/media-svg", "svc/documents"])
    for (const offered of packs.packs) for (const name of offered.contracts) expect(registry.byName.get(name)?.claimedBy).toBe(offered.id)
  })
})
