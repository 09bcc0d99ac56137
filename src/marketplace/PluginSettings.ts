/** The operator's settings of plugin listings and credentials (from AppConfig). */
import { Context, Effect } from "effect"
import { Forbidden } from "../platform/Errors.ts"

export interface PluginSettingsService {
  /**
   * `PLUGIN_DENYLIST`: server names no organization may install, enable or connect (comma-separated;
   * an entry ending in `*` denies every name it begins; `name=reason` gives the reason the
   * marketplace shows). The operator's list: the organization-level denylist capabilities were
   * removed after the design (spec 1), see docs/decisions.md.
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

/** Why a name is denylisted (spec 2.9's denylist entry reason, shown as the marketplace tooltip). */
export interface Denial {
  readonly entry: string
  readonly reason: string
}

/** The denylist entry that refuses `name`, if any: the one rule for install, enable, connect and the marketplace. */
export const deniedBy = (denylist: ReadonlyArray<string>, name: string): Denial | undefined => {
  for (const item of denylist) {
    const split = item.indexOf("=")
    const entry = (split === -1 ? item : item.slice(0, split)).trim()
    const matches = entry.endsWith("*") ? name.startsWith(entry.slice(0, -1)) : entry === name
    if (matches) return { entry, reason: split === -1 ? `denied by the operator (${entry})` : item.slice(split + 1).trim() }
  }
  return undefined
}

/** How a denylisted name shows in the marketplace: `{ reason }`, or null. */
export const denialOf = (name: string) => Effect.map(PluginSettings, ({ denylist }) => {
  const denial = deniedBy(denylist, name)
  return denial === undefined ? null : { reason: denial.reason }
})

/** Refuses `name` when the denylist holds it: 403 `forbidden`, reason `plugin_denylisted`, at every door. */
export const refuseDenylisted = (name: string, doing: string) =>
  Effect.flatMap(PluginSettings, ({ denylist }) => {
    const denial = deniedBy(denylist, name)
    return denial === undefined
      ? Effect.void
      : Effect.fail(new Forbidden({ reason: "plugin_denylisted", message: `${name} may not be ${doing}: the operator denies it (${denial.reason})` }))
  })
