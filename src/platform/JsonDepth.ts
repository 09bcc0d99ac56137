/**
 * How deep JSON may nest wherever it comes in: a request body (the gateway scans its bytes before
 * parsing), a capability's input on any surface (the checkpoint walks it before decoding), and what a
 * webhook receiver or a registry answers. Schema decoding and encoding, condition evaluation and template rendering
 * recurse once per level; past this bound none of them ever sees the value (docs/decisions.md,
 * "Depth bounds").
 */

/** Arrays and objects nest at most this deep: `{}` is 1, `{"a":[1]}` is 2. */
export const MAX_JSON_DEPTH = 64

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d

/**
 * Whether JSON text nests deeper than MAX_JSON_DEPTH: one pass over its bytes counting brackets
 * outside strings, without parsing (UTF-8 continuation bytes never look like ASCII). Text that is not
 * JSON is left to the parser to refuse.
 */
export const textNestsTooDeep = (bytes: Uint8Array): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]
    if (inString) {
      if (byte === BACKSLASH) i++
      else if (byte === QUOTE) inString = false
    } else if (byte === QUOTE) inString = true
    else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      if (++depth > MAX_JSON_DEPTH) return true
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) depth--
  }
  return false
}

export const tooDeepMessage = `JSON nests at most ${MAX_JSON_DEPTH} levels of arrays and objects`
