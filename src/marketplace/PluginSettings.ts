/** The operator's settings of plugin listings and credentials (from AppConfig). */
import { Context } from "effect"

export interface PluginSettingsService {
  /**
   * `PLUGIN_DENYLIST`: server names no organization may install (comma-separated; an entry ending
   * in `*` denies every name it begins). The operator's list: the organization-level denylist
   * capabilities were removed after the design (spec 1), see docs/decisions.md.
   */
  readonly denylist: ReadonlyArray<string>
  /** `OAUTH_REFRESH_LEAD_SECONDS`: how long before `expires_at` the watcher refreshes a token. */
  readonly refreshLeadSeconds: number
  /** `OAUTH_REFRESH_CHECK_SECONDS`: how often the watcher looks for tokens due (0: it does not run). */
  readonly refreshCheckSeconds: number
}

export class PluginSettings extends Context.Tag("svc/PluginSettings")<PluginSettings, PluginSettingsService>() {}

export const parseDenylist = (value: string | undefined): ReadonlyArray<string> =>
  (value ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")

/** The denylist entry that refuses `name`, if any. */
export const deniedBy = (denylist: ReadonlyArray<string>, name: string): string | undefined =>
  denylist.find((entry) => (entry.endsWith("*") ? name.startsWith(entry.slice(0, -1)) : entry === name))
