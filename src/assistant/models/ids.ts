/**
 * Model ids and effort levels (spec 2.2), pure: no provider is loaded here, so the capabilities
 * that store tiers and the resolver that runs them read one rule.
 *
 * A model id is `<family>:<model>` (`openai:gpt-5-mini`, `anthropic:claude-opus-4-5`,
 * `offline:fast`), or a bare model name whose family its name shows: `gpt-*`, `chatgpt-*`, `o1*`,
 * `o3*`, `o4*` are OpenAI's, `claude-*` Anthropic's, `offline*` the built-in offline model's.
 * Anything else names no family we can run (409 `model_family_unknown`): an OpenAI-compatible
 * server's own model (`llama3:8b` on Ollama) is named with the family, `openai:llama3:8b`.
 */
import { Schema } from "effect"

export const ModelFamily = Schema.Literal("offline", "openai", "anthropic")
export type ModelFamily = typeof ModelFamily.Type

/** The request's `effort` field. */
export const Effort = Schema.Literal("low", "medium", "high", "xhigh", "max")
export type Effort = typeof Effort.Type

export interface ModelRef {
  readonly family: ModelFamily
  /** The provider's own model name, e.g. `gpt-5-mini`. */
  readonly name: string
  /** `<family>:<name>`: the form tiers store and runs record. */
  readonly id: string
}

const FAMILIES: ReadonlySet<string> = new Set<ModelFamily>(["offline", "openai", "anthropic"])

const familyOfBareName = (name: string): ModelFamily | undefined => {
  const lower = name.toLowerCase()
  if (/^(?:gpt-|chatgpt-|o1|o3|o4)/.test(lower)) return "openai"
  if (lower.startsWith("claude-")) return "anthropic"
  if (lower.startsWith("offline")) return "offline"
  return undefined
}

/** The family and model a model id names, or undefined when it names no family. */
export const parseModelId = (raw: string): ModelRef | undefined => {
  const value = raw.trim()
  const colon = value.indexOf(":")
  if (colon > 0) {
    const family = value.slice(0, colon).toLowerCase()
    const name = value.slice(colon + 1).trim()
    if (FAMILIES.has(family) && name !== "") return { family: family as ModelFamily, name, id: `${family}:${name}` }
  }
  const family = familyOfBareName(value)
  return family === undefined ? undefined : { family, name: value, id: `${family}:${value}` }
}
