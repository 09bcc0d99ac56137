/** How the marketplace reaches registries and READMEs, and how often it syncs (from AppConfig). */
import { Context } from "effect"
import { createHash } from "node:crypto"

export interface RegistrySettingsService {
  /** The global default seed's base URL (`MCP_REGISTRY_URL`). */
  readonly defaultRegistryUrl: string
  /** Where repositories' raw files are read (`GITHUB_RAW_BASE_URL`): `<base>/<owner>/<repo>/HEAD/<path>`. */
  readonly githubRawBaseUrl: string
  /** Seconds between scheduled syncs of a registry (`CATALOG_SYNC_INTERVAL_SECONDS`); 0: none scheduled. */
  readonly syncIntervalSeconds: number
  /** `limit` asked of each page (`CATALOG_SYNC_PAGE_SIZE`). */
  readonly pageSize: number
  /** How long a sync holds the registry without progress before another may take over. */
  readonly leaseMs: number
}

export class RegistrySettings extends Context.Tag("svc/RegistrySettings")<RegistrySettings, RegistrySettingsService>() {}

export const OFFICIAL_REGISTRY_URL = "https://registry.modelcontextprotocol.io"
export const GITHUB_RAW_URL = "https://raw.githubusercontent.com"

const digest = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 32)

/** The global default seed's id: one for the whole platform, whatever its URL. */
export const DEFAULT_SEED_REGISTRY_ID = `mreg_${digest("default-seed")}`

/** An organization's registry id follows from its base URL: a second add of the same URL is the same registry. */
export const orgRegistryId = (orgId: string, baseUrl: string) => `mreg_${digest(`${orgId}\u0000${baseUrl}`)}`

/** A registry base URL as kept: http(s), no credentials, query or fragment, no trailing slash; undefined if not one. */
export const normalizeBaseUrl = (value: string): string | undefined => {
  if (!URL.canParse(value)) return undefined
  const url = new URL(value)
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") return undefined
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`
}
