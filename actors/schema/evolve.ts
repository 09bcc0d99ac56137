import type { SchemaEvent } from "./events.ts"
import type { SchemaState } from "./state.ts"

export const evolve = (state: SchemaState, event: SchemaEvent): SchemaState => {
  switch (event._tag) {
    case "schema.label_defined":
      return {
        labels: { ...state.labels, [event.label]: { properties: event.properties, version: event.version } }
      }
  }
}
