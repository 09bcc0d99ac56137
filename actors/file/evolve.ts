import type { FileEvent } from "./events.ts"
import type { FileState } from "./state.ts"

// The decider records an upload only on an absent file; a log that says otherwise is corrupt.
export const evolve = (state: FileState, event: FileEvent): FileState => {
  switch (event._tag) {
    case "file.uploaded": {
      if (state._tag !== "Absent") throw new Error(`file.uploaded for file ${event.fileId} in state ${state._tag}`)
      const { _tag, ...fields } = event
      return { _tag: "Uploaded", ...fields }
    }
  }
}
