/** Checks node property values against a label definition; the node decider relies on it. */
import { Either } from "effect"
import {
  type LabelDefinition,
  own,
  type PropertiesInput,
  type PropertyDefinition,
  type PropertyValue
} from "./definition.ts"
import {
  InvalidEnumValue,
  InvalidPropertyType,
  MissingProperty,
  type PropertyError,
  UnknownProperty
} from "./errors.ts"

/**
 * ISO 8601 date or date-time. A time must carry its offset: a local time would mean a different
 * instant on each process, and automations compare datetimes with `before` / `after`.
 */
const isoDateTime = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?$/

export const isDateTime = (value: string): boolean => {
  if (!isoDateTime.test(value) || Number.isNaN(Date.parse(value))) return false
  // Date.parse rolls impossible days over (2023-02-29 becomes 2023-03-01); the day must survive.
  const day = value.slice(0, 10)
  return new Date(Date.parse(day)).toISOString().startsWith(day)
}

const valueError = (
  property: string,
  declared: PropertyDefinition,
  value: PropertyValue
): PropertyError | undefined => {
  const wrongType = () => new InvalidPropertyType({ property, expected: declared.type })
  switch (declared.type) {
    case "string":
      return typeof value === "string" ? undefined : wrongType()
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? undefined : wrongType()
    case "boolean":
      return typeof value === "boolean" ? undefined : wrongType()
    case "datetime":
      return typeof value === "string" && isDateTime(value) ? undefined : wrongType()
    case "enum":
      if (typeof value !== "string") return wrongType()
      return declared.values.includes(value)
        ? undefined
        : new InvalidEnumValue({ property, value, allowed: declared.values })
  }
}

/**
 * The first rule `properties` break, in input order, then missing required properties in definition
 * order. `null` means absent: on create it leaves the property unset, on update it removes it, so it
 * is never a type error, and removing a property the label no longer declares is allowed.
 */
export const validateProperties = (
  definition: LabelDefinition,
  properties: PropertiesInput,
  mode: "create" | "update"
): Either.Either<void, PropertyError> => {
  for (const [property, value] of Object.entries(properties)) {
    if (value === null) continue
    const declared = own(definition.properties, property)
    const error = declared === undefined ? new UnknownProperty({ property }) : valueError(property, declared, value)
    if (error !== undefined) return Either.left(error)
  }
  for (const [property, declared] of Object.entries(definition.properties)) {
    const value = own(properties, property)
    // On update an omitted property keeps its value; only an explicit null removes it.
    const absent = mode === "create" ? value == null : value === null
    if (declared.required && absent) return Either.left(new MissingProperty({ property }))
  }
  return Either.void
}
