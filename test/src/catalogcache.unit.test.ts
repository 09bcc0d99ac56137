/** The node's catalog page cache: least recently used pages go first; a registry's stamp changes
 * with every recorded page and ended sync. */
import { describe, expect, it } from "vitest"
import { makeCatalogCache, registryStamp } from "../../src/marketplace/CatalogCache.ts"

describe("catalog page cache", () => {
  it("keeps the most recently used pages", () => {
    const cache = makeCatalogCache(2)
    cache.set("a", 1)
    cache.set("b", 2)
    expect(cache.get("a")).toBe(1)
    cache.set("c", 3)
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual([1, undefined, 3])
  })

  it("stamps a registry by what a page or a sync's end rewrites", () => {
    const row = { registry_id: "mreg_1", created_at: new Date("2025-01-01T00:00:00Z"), base_url: "https://r", sync: null, last_sync: null }
    const syncing = { ...row, sync: { syncId: "s1", counts: { pages: 1 } } }
    const nextPage = { ...row, sync: { syncId: "s1", counts: { pages: 2 } } }
    const ended = { ...row, last_sync: { syncId: "s1" } }
    const stamps = [row, syncing, nextPage, ended, { ...row, created_at: new Date("2025-02-01T00:00:00Z") }, { ...row, base_url: "https://s" }].map(registryStamp)
    expect(new Set(stamps).size).toBe(stamps.length)
    expect(registryStamp({ ...row })).toBe(stamps[0])
  })
})
