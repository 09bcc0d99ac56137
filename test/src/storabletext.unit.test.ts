import { describe, expect, it } from "vitest"
import { clipped } from "../../src/platform/StorableText.ts"

describe("clipped", () => {
  it("keeps text of at most max characters as it is", () => {
    expect(clipped("", 5)).toBe("")
    expect(clipped("hello", 5)).toBe("hello")
  })

  it("cuts longer text to max characters, the last one an ellipsis", () => {
    expect(clipped("hello world", 5)).toBe("hell…")
    expect(clipped("hello world", 5)).toHaveLength(5)
  })

  it("never keeps half of a surrogate pair", () => {
    // "abc" then U+1F600 (two UTF-16 units): a cut after 4 units would split it
    const text = "abc\u{1F600}def"
    expect(clipped(text, 5)).toBe("abc…")
    expect(clipped(text, 6)).toBe("abc\u{1F600}…")
  })
})
