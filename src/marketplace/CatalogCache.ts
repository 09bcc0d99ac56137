/**
 * The node's cache of catalog pages. The catalog changes only when a registry records a page,
 * ends a sync, or is added or removed, and each of these rewrites the registry's row; so a page is
 * kept under the state of the registries it was read from (their `stamp`), and a browse that finds
 * the same state finds the same page. Reading the registries' rows goes through the read fence, so
 * a caller sees its own syncs at once.
 */
import { Context, Layer } from "effect"

/** Pages kept, the least recently used dropped first. */
const MAX_PAGES = 2_000

export interface CatalogCacheService {
  readonly get: (key: string) => unknown
  readonly set: (key: string, page: unknown) => void
}

export class CatalogCache extends Context.Tag("svc/CatalogCache")<CatalogCache, CatalogCacheService>() {}

export const makeCatalogCache = (maxPages = MAX_PAGES): CatalogCacheService => {
  const pages = new Map<string, unknown>()
  return {
    get: (key) => {
      const page = pages.get(key)
      if (page !== undefined) {
        pages.delete(key)
        pages.set(key, page)
      }
      return page
    },
    set: (key, page) => {
      pages.delete(key)
      pages.set(key, page)
      if (pages.size > maxPages) pages.delete(pages.keys().next().value!)
    }
  }
}

export const layer = Layer.sync(CatalogCache, () => makeCatalogCache())

/** What identifies the state of a registry's catalog: a page recorded or a sync ended changes it. */
export const registryStamp = (row: { registry_id: string; created_at: Date | string; base_url: string; sync: any; last_sync: any }) =>
  [row.registry_id, String(row.created_at instanceof Date ? row.created_at.getTime() : row.created_at), row.base_url, row.sync?.syncId ?? "", row.sync?.counts?.pages ?? "", row.last_sync?.syncId ?? ""].join("|")
