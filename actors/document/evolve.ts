import type { DocumentEvent } from "./events.ts"
import type { DocumentState } from "./state.ts"

// The decider creates only an absent document and revises only a present one; a log that says
// otherwise is corrupt.
export const evolve = (state: DocumentState, event: DocumentEvent): DocumentState => {
  switch (event._tag) {
    case "document.created": {
      if (state._tag !== "Absent") throw new Error(`document.created for document ${event.documentId} in state ${state._tag}`)
      const { _tag, userId, createdAt, ...fields } = event
      return { _tag: "Present", ...fields, createdBy: userId, createdAt, version: 1, updatedBy: userId, updatedAt: createdAt }
    }
    case "document.revised": {
      if (state._tag !== "Present") throw new Error(`document.revised for document ${event.documentId} in state ${state._tag}`)
      return { ...state, version: event.version, title: event.title, content: event.content, updatedBy: event.userId, updatedAt: event.revisedAt }
    }
  }
}
