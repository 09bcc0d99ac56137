/**
 * Rejections of the schema registry, and the property errors `validateProperties` reports to the
 * node actor. All are HTTP 400 `bad_request`; the `reason` each maps to is named on its class.
 */
import { Schema } from "effect"
import { PropertyType } from "./definition.ts"

/** Reason `invalid_label_name`. */
export class InvalidLabelName extends Schema.TaggedError<InvalidLabelName>()("InvalidLabelName", {
  label: Schema.String
}) {}

/** Reason `invalid_property_name`. */
export class InvalidPropertyName extends Schema.TaggedError<InvalidPropertyName>()("InvalidPropertyName", {
  label: Schema.String,
  property: Schema.String
}) {}

/** Reason `enum_values_required`: an enum property without values, or with an empty list. */
export class EnumValuesRequired extends Schema.TaggedError<EnumValuesRequired>()("EnumValuesRequired", {
  label: Schema.String,
  property: Schema.String
}) {}

/** Reason `duplicate_enum_value`. */
export class DuplicateEnumValue extends Schema.TaggedError<DuplicateEnumValue>()("DuplicateEnumValue", {
  label: Schema.String,
  property: Schema.String,
  value: Schema.String
}) {}

/** Reason `enum_values_not_allowed`: `values` on a property that is not an enum. */
export class EnumValuesNotAllowed extends Schema.TaggedError<EnumValuesNotAllowed>()("EnumValuesNotAllowed", {
  label: Schema.String,
  property: Schema.String,
  type: PropertyType
}) {}

export const SchemaError = Schema.Union(
  InvalidLabelName,
  InvalidPropertyName,
  EnumValuesRequired,
  DuplicateEnumValue,
  EnumValuesNotAllowed
)
export type SchemaError = typeof SchemaError.Type

/** Reason `unknown_property`: the label declares no such property. */
export class UnknownProperty extends Schema.TaggedError<UnknownProperty>()("UnknownProperty", {
  property: Schema.String
}) {}

/** Reason `invalid_property_type`: the value does not have the property's data type. */
export class InvalidPropertyType extends Schema.TaggedError<InvalidPropertyType>()("InvalidPropertyType", {
  property: Schema.String,
  expected: PropertyType
}) {}

/** Reason `invalid_enum_value`. */
export class InvalidEnumValue extends Schema.TaggedError<InvalidEnumValue>()("InvalidEnumValue", {
  property: Schema.String,
  value: Schema.String,
  allowed: Schema.NonEmptyArray(Schema.String)
}) {}

/** Reason `missing_property`: a required property is absent on create or removed on update. */
export class MissingProperty extends Schema.TaggedError<MissingProperty>()("MissingProperty", {
  property: Schema.String
}) {}

export const PropertyError = Schema.Union(UnknownProperty, InvalidPropertyType, InvalidEnumValue, MissingProperty)
export type PropertyError = typeof PropertyError.Type
