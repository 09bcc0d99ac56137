import { Array, Either, Record } from "effect"
import { isIdentifier, own, type PropertyDefinition, type PropertySpec } from "./definition.ts"
import {
  DuplicateEnumValue,
  EnumValuesNotAllowed,
  EnumValuesRequired,
  InvalidLabelName,
  InvalidPropertyName,
  type SchemaError
} from "./errors.ts"
import { LabelDefined, type SchemaEvent } from "./events.ts"
import type { SchemaCommand } from "./protocol.ts"
import type { SchemaState } from "./state.ts"

/** Turns a declared property into its canonical definition, or says which rule it breaks. */
const checkProperty = (
  label: string,
  property: string,
  spec: PropertySpec
): Either.Either<PropertyDefinition, SchemaError> => {
  if (!isIdentifier(property)) return Either.left(new InvalidPropertyName({ label, property }))
  const required = spec.required ?? false
  if (spec.type !== "enum") {
    return spec.values === undefined
      ? Either.right({ type: spec.type, required })
      : Either.left(new EnumValuesNotAllowed({ label, property, type: spec.type }))
  }
  const values = spec.values ?? []
  if (!Array.isNonEmptyReadonlyArray(values)) return Either.left(new EnumValuesRequired({ label, property }))
  const duplicate = values.find((value, index) => values.indexOf(value) !== index)
  if (duplicate !== undefined) return Either.left(new DuplicateEnumValue({ label, property, value: duplicate }))
  return Either.right({ type: "enum", values, required })
}

export const decide = (
  state: SchemaState,
  command: SchemaCommand
): Either.Either<ReadonlyArray<SchemaEvent>, SchemaError> => {
  switch (command._tag) {
    case "DefineLabel": {
      const { workspaceId, label } = command
      if (!isIdentifier(label)) return Either.left(new InvalidLabelName({ label }))
      const version = (own(state.labels, label)?.version ?? 0) + 1
      return Either.all(Record.map(command.properties, (spec, property) => checkProperty(label, property, spec))).pipe(
        Either.map((properties) => [new LabelDefined({ workspaceId, label, properties, version })])
      )
    }
  }
}
