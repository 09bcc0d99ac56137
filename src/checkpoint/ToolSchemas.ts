/**
 * Capability inputs and outputs as tool schemas: MCP tools and the agent's tools are both derived
 * from the registry's Effect Schemas through this one function. The registry derives each
 * capability's once, when it is made (Capability.ts `makeRegistry`).
 */
import { JSONSchema, type Schema } from "effect"

export type JsonObject = Record<string, unknown>

export const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A capability's input or output as a JSON Schema 2020-12 object schema, as MCP and model providers require (`type:
 * "object"` at the root), or undefined when it is not one. `$schema` and a root `$id` go (MCP
 * defaults to 2020-12, and a relative `$id` would move the base of `#/$defs/...` references);
 * `$defs` stays at the root, where those references point.
 */
export const objectSchemaOf = (schema: Schema.Schema<any, any>): JsonObject | undefined => {
  let root: JsonObject
  try {
    root = { ...(JSONSchema.make(schema, { target: "jsonSchema2020-12" }) as unknown as JsonObject) }
  } catch {
    return undefined
  }
  delete root.$schema
  delete root.$id
  if (root.type === "object") return root
  const branches = root.anyOf ?? root.oneOf
  if (Array.isArray(branches)) {
    // an empty struct accepts any non-nullish value and is rendered as object-or-array: as a tool
    // input it is an object with no declared properties
    if (branches.some((b) => isObject(b) && b.type === "object" && Object.keys(b).length === 1)) {
      const { anyOf: _anyOf, oneOf: _oneOf, ...rest } = root
      return { ...rest, type: "object", properties: {} }
    }
    if (branches.every((b) => isObject(b) && b.type === "object")) return { type: "object", ...root }
  }
  return undefined
}
