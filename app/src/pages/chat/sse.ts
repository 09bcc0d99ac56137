/**
 * A server-sent-events reader for the chat stream (spec 4.1 stream rules): events are blocks of
 * lines ended by a blank line; `data:` lines carry the payload (joined with newlines), `event:`
 * names it, lines starting with `:` are comments (`: keep-alive`). Bytes arrive in arbitrary
 * pieces, so a block is handled only once its blank line has arrived.
 */

export interface SseMessage {
  /** Undefined for an unnamed event (the chat's JSON events); `done` for the closing one. */
  readonly event: string | undefined
  readonly data: string
}

export const createSseReader = (onMessage: (message: SseMessage) => void) => {
  let buffer = ""
  let event: string | undefined
  let data: Array<string> = []

  const line = (text: string) => {
    if (text === "") {
      if (data.length > 0 || event !== undefined) onMessage({ event, data: data.join("\n") })
      event = undefined
      data = []
      return
    }
    if (text.startsWith(":")) return
    const colon = text.indexOf(":")
    const field = colon === -1 ? text : text.slice(0, colon)
    // one space after the colon belongs to the syntax, not the value
    const value = colon === -1 ? "" : text.slice(text[colon + 1] === " " ? colon + 2 : colon + 1)
    if (field === "data") data.push(value)
    else if (field === "event") event = value
  }

  return {
    /** Hands over the next piece of the body, already decoded. */
    feed: (text: string) => {
      buffer += text
      const lineEnd = /\r\n|\r|\n/g
      let start = 0
      for (let found = lineEnd.exec(buffer); found !== null; found = lineEnd.exec(buffer)) {
        // a lone \r at the very end may be the first half of \r\n: wait for the next piece
        if (found[0] === "\r" && found.index + 1 === buffer.length) break
        line(buffer.slice(start, found.index))
        start = found.index + found[0].length
      }
      buffer = buffer.slice(start)
    }
  }
}
