/** Condition operators of automations (spec 2.8), typed by the data type of the watched property. */
import { Schema } from "effect"
import type { PropertyType } from "./definition.ts"

export const Operator = Schema.Literal(
  "eq",
  "neq",
  "gt",
  "gte",
  "lt",
  "lte",
  "contains",
  "in",
  "not_in",
  "before",
  "after",
  "changed",
  "exists",
  "not_exists"
)
export type Operator = typeof Operator.Type

/** Operators that apply to every data type. */
const common = ["eq", "neq", "changed", "exists", "not_exists"] as const

const byType: { readonly [T in PropertyType]: ReadonlyArray<Operator> } = {
  string: [...common, "contains", "in", "not_in"],
  number: [...common, "gt", "gte", "lt", "lte", "in", "not_in"],
  boolean: common,
  datetime: [...common, "before", "after"],
  enum: [...common, "in", "not_in"]
}

export const operatorsFor = (type: PropertyType): ReadonlyArray<Operator> => byType[type]
