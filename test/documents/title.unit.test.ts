/** The title `documents.generate` gives a written document when the caller names none. */
import { describe, expect, it } from "vitest"
import { titleOf } from "../../src/documents/DocumentsPack.ts"

describe("titleOf", () => {
  const table: ReadonlyArray<readonly [string, string, string, string]> = [
    ["the first heading", "intro\n\n## Plan ##\n# Later", "a prompt", "Plan"],
    ["the prompt when there is no heading", "You said: hi", "  Write\n a plan ", "Write a plan"],
    ["Untitled for an empty prompt and no heading", "text", " ", "Untitled"],
    ["at most 80 characters", "", "x".repeat(100), `${"x".repeat(79)}\u2026`]
  ]
  it.each(table)("is %s", (_, markdown, prompt, title) => expect(titleOf(markdown, prompt)).toBe(title))
})
