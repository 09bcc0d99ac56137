/**
 * Capability packs made available to a suite's organization: each pack installed by its plugin id
 * and enabled (spec 4.5) by an Owner added for it, as the entitlement in the checkpoint asks
 * before a pack's capability runs.
 */
import { addPerson } from "./people.ts"
import type { TestNode } from "./platform.ts"
import { asPerson, ok } from "./plugins.ts"

export const enablePacks = async (node: TestNode, ...pluginIds: ReadonlyArray<string>) => {
  const asOwner = await asPerson(node, await addPerson(node, "pack-owner", { org: "owner" }))
  for (const pluginId of pluginIds) {
    const { listingId } = ok(await asOwner("plugin.org.install", { pluginId }))
    ok(await asOwner("plugin.org.set_enabled", { listingId, enabled: true }))
  }
}
