/**
 * What a label definition is made of, shared by the schema registry (which owns definitions) and
 * the node actor (whose commands carry the definition they must satisfy).
 */
import { Schema } from "effect"

/** Label and property names; automations' conditions and the read model's JSON keys refer to them. */
const identifier = /^[A-Za-z][A-Za-z0-9_]{0,63}$/

export const isIdentifier = (name: string): boolean => identifier.test(name)

/** A record's own entry: names such as `constructor` are valid identifiers and must not hit the prototype. */
export const own = <V>(record: { readonly [key: string]: V }, key: string): V | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined

export const PropertyType = Schema.Literal("string", "number", "boolean", "datetime", "enum")
export type PropertyType = typeof PropertyType.Type

/** A property as a caller declares it; `DefineLabel` checks it and turns it into a `PropertyDefinition`. */
export const PropertySpec = Schema.Struct({
  type: PropertyType,
  values: Schema.optional(Schema.Array(Schema.String)),
  required: Schema.optional(Schema.Boolean)
})
export type PropertySpec = typeof PropertySpec.Type

/**
 * A checked property definition. Enum values are non-empty by type, and `required` is explicit, so
 * every reader sees one canonical shape.
 */
export const PropertyDefinition = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("enum"),
    values: Schema.NonEmptyArray(Schema.String),
    required: Schema.Boolean
  }),
  Schema.Struct({
    type: Schema.Literal("string", "number", "boolean", "datetime"),
    required: Schema.Boolean
  })
)
export type PropertyDefinition = typeof PropertyDefinition.Type

export const PropertyDefinitions = Schema.Record({ key: Schema.String, value: PropertyDefinition })
export type PropertyDefinitions = typeof PropertyDefinitions.Type

/** The definition of one label, as node commands carry it. */
export const LabelDefinition = Schema.Struct({ properties: PropertyDefinitions })
export type LabelDefinition = typeof LabelDefinition.Type

/** A property value that is set. Absence is spelled `null` wherever a value may be missing. */
export const PropertyValue = Schema.Union(Schema.String, Schema.Number, Schema.Boolean)
export type PropertyValue = typeof PropertyValue.Type

/** The properties a node holds: never null, an absent property has no key. */
export const Properties = Schema.Record({ key: Schema.String, value: PropertyValue })
export type Properties = typeof Properties.Type

/** Properties as commands give them: `null` leaves a property unset on create and removes it on update. */
export const PropertiesInput = Schema.Record({ key: Schema.String, value: Schema.NullOr(PropertyValue) })
export type PropertiesInput = typeof PropertiesInput.Type
